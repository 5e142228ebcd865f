package dev.fulcrum.accounts;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

import dev.fulcrum.accounts.ConsoleSessions.Session;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The console's sessions (table {@code console_sessions}), on the pooled connection {@link ConsoleSessions} opens: a
 * session is checked on every console request, outside any transaction.
 */
final class SessionStatements {

    private SessionStatements() {
    }

    /** Drops the expired sessions, then stores a new one of the key, for {@code seconds}. */
    static void insert(Connection connection, String idHash, long apiKeyId, String csrf, long seconds)
            throws SQLException {
        NativeSql.update(connection, "delete from console_sessions where expires_at < now()");
        NativeSql.update(connection, """
                insert into console_sessions (id_hash, api_key_id, csrf_token, expires_at)
                values (?1, ?2, ?3, now() + ?4 * interval '1 second')""", idHash, apiKeyId, csrf, seconds);
    }

    /** The unexpired session of that hash whose key is not revoked, with its caller. */
    static Optional<Session> find(Connection connection, String idHash) throws SQLException {
        return NativeSql.first(connection, """
                select s.csrf_token, k.id, u.id, u.username, u.admin
                from console_sessions s join api_keys k on k.id = s.api_key_id join users u on u.id = k.user_id
                where s.id_hash = ?1 and s.expires_at > now() and k.revoked_at is null""",
                row -> new Session(new Caller(row.longValue(2), row.string(3), row.bool(4), row.longValue(1)),
                        row.string(0), idHash),
                idHash);
    }

    static void delete(Connection connection, String idHash) throws SQLException {
        NativeSql.update(connection, "delete from console_sessions where id_hash = ?1", idHash);
    }
}

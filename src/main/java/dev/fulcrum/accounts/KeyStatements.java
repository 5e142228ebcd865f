package dev.fulcrum.accounts;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The API key check every request of every interface runs, and the note that a key was used. On a pooled connection of
 * the caller's ({@link NativeSql}'s connection form) because it runs outside any transaction and request context
 * (inference checks keys on Vert.x workers, the dataset read on its own connection), where no EntityManager is.
 */
final class KeyStatements {

    private KeyStatements() {
    }

    /** The caller whose unrevoked key has that hash, in one statement. */
    static Optional<Caller> caller(Connection connection, String keyHash) throws SQLException {
        return NativeSql.first(connection, """
                select k.id, u.id, u.username, u.admin
                from api_keys k join users u on u.id = k.user_id
                where k.key_hash = ?1 and k.revoked_at is null""",
                row -> new Caller(row.longValue(1), row.string(2), row.bool(3), row.longValue(0)), keyHash);
    }

    static void touch(Connection connection, long keyId) throws SQLException {
        NativeSql.update(connection, "update api_keys set last_used_at = now() where id = ?1", keyId);
    }
}

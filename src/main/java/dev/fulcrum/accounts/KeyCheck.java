package dev.fulcrum.accounts;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The API key check every request of every interface runs, and the note that a key was used. Plain JDBC on a pooled
 * connection because it runs outside any transaction and request context (inference checks keys on Vert.x workers, the
 * dataset read on its own connection), where an EntityManager, and so NativeSql, cannot run it in one statement.
 */
final class KeyCheck {

    private KeyCheck() {
    }

    /** The caller whose unrevoked key has that hash, in one statement. */
    static Optional<Caller> caller(Connection connection, String keyHash) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement("""
                select k.id, u.id, u.username, u.admin
                from api_keys k join users u on u.id = k.user_id
                where k.key_hash = ? and k.revoked_at is null""")) {
            query.setString(1, keyHash);
            try (ResultSet rs = query.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Caller(rs.getLong(2), rs.getString(3), rs.getBoolean(4), rs.getLong(1)));
            }
        }
    }

    static void touch(Connection connection, long keyId) throws SQLException {
        try (PreparedStatement update = connection
                .prepareStatement("update api_keys set last_used_at = now() where id = ?")) {
            update.setLong(1, keyId);
            update.executeUpdate();
        }
    }
}

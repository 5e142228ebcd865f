package dev.fulcrum.platform;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

/**
 * One transaction on a pooled connection, for work on worker threads outside the ORM's transactions (the cluster-wide
 * inference limits): commits what the work did, rolls it back when it fails, and hands the connection back in
 * auto-commit mode.
 */
public final class JdbcTransactions {

    private JdbcTransactions() {
    }

    /** What runs in the transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T apply(Connection connection) throws SQLException;
    }

    public static <T> T run(DataSource dataSource, Work<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try {
                T result = work.apply(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }
}

package dev.fulcrum.platform.database;

import java.io.UncheckedIOException;
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
            T result;
            try {
                result = work.apply(connection);
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                // the work's failure is the one to answer (a full disk under a COPY is a 507), whatever the rollback
                // does; an I/O failure inside the work (a COPY whose stream failed, which the driver cancels) leaves
                // the driver's protocol state unsure, so that connection is closed rather than reused
                try {
                    connection.rollback();
                    connection.setAutoCommit(true);
                    if (e instanceof UncheckedIOException) {
                        abort(connection, e);
                    }
                } catch (SQLException | RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                    abort(connection, e);
                }
                throw e;
            }
            connection.setAutoCommit(true);
            return result;
        }
    }

    /** Closes a connection for good instead of handing it back to the pool. */
    private static void abort(Connection connection, Exception failure) {
        try {
            connection.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}

package dev.fulcrum.platform.database;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import javax.sql.DataSource;

import jakarta.persistence.EntityManager;

import org.hibernate.engine.spi.SessionImplementor;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.util.PGobject;

import com.github.benmanes.caffeine.cache.Cache;

import io.micrometer.core.instrument.Metrics;

import dev.fulcrum.platform.Caches;

/**
 * Native SQL, for what PostgreSQL does better than the ORM (upserts, advisory locks, ...). Parameters are positional
 * ({@code ?1}, {@code ?2}, ...) and bound in order; a value that may be null is given with its type
 * ({@link #typed(Object, Class)}) so that PostgreSQL knows it; a list of strings is a {@link #textArray(Collection)}.
 * Rows are read by column index with typed getters ({@link Row}), timestamps as {@link OffsetDateTime} in UTC. A
 * statement assembled from a request's parts (a filter) numbers each parameter as it adds it ({@link #param}); many
 * rows of one statement go as a JDBC batch ({@link #batch}); an answer written straight from a result reads its rows in
 * place ({@link #read}). This is the one way to the database by SQL: no other class prepares a statement
 * ({@code SqlOwnershipTest}).
 *
 * <pre>
 * NativeSql.update(em, "insert into t (id, tags) values (?1, cast(?2 as text[])) on conflict (id) do nothing", id,
 *         NativeSql.textArray(tags));
 * List&lt;Item&gt; items = NativeSql.list(em, "select id, created_at from t where owner = ?1",
 *         row -&gt; new Item(row.string(0), row.time(1)), NativeSql.typed(owner, Long.class));
 * </pre>
 */
public final class NativeSql {

    private NativeSql() {
    }

    /** A parameter with its type, for values that may be null. */
    public record Typed<T>(T value, Class<T> type) {
    }

    /** A {@code text[]} parameter; the statement casts it: {@code cast(?n as text[])}. */
    public record TextArray(List<String> values) {

        /** The PostgreSQL array literal: {@code {"a","b \"c\""}}. */
        public String literal() {
            StringBuilder literal = new StringBuilder("{");
            for (String value : values) {
                if (literal.length() > 1) {
                    literal.append(',');
                }
                literal.append('"').append(value.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
            }
            return literal.append('}').toString();
        }
    }

    public static <T> Typed<T> typed(T value, Class<T> type) {
        return new Typed<>(value, type);
    }

    public static TextArray textArray(Collection<String> values) {
        return new TextArray(List.copyOf(values));
    }

    /** Runs an insert, update or delete; the number of rows it changed. */
    public static int update(EntityManager em, String sql, Object... params) {
        return run(em, sql, params, PreparedStatement::executeUpdate);
    }

    /** Runs an insert, update or delete on {@code connection} (outside the persistence context); rows changed. */
    public static int update(Connection connection, String sql, Object... params) throws SQLException {
        return execute(connection, sql, params, PreparedStatement::executeUpdate);
    }

    /**
     * Adds {@code value} to an assembled statement's parameters; answers the numbered parameter that stands for it in
     * the SQL: a question mark and the value's position among the parameters (the third is written with 3).
     */
    public static String param(List<Object> params, Object value) {
        params.add(value);
        return "?" + params.size();
    }

    /**
     * Runs one insert, update or delete for each row of parameters, as one JDBC batch (one round trip per batch, not
     * per row); nothing when there are no rows.
     */
    public static void batch(EntityManager em, String sql, List<Object[]> rows) {
        if (rows.isEmpty()) {
            return;
        }
        Positional positional = Positional.of(sql);
        work(em, connection -> {
            try (PreparedStatement statement = connection.prepareStatement(positional.jdbc())) {
                for (Object[] row : rows) {
                    bind(connection, statement, positional, sql, row);
                    statement.addBatch();
                }
                statement.executeBatch();
            }
            return null;
        });
    }

    /** The rows of a query, each mapped. */
    public static <T> List<T> list(EntityManager em, String sql, Function<Row, T> mapper, Object... params) {
        return run(em, sql, params, statement -> rows(statement, mapper));
    }

    /** The first row of a query, mapped; empty when there is none. */
    public static <T> Optional<T> first(EntityManager em, String sql, Function<Row, T> mapper, Object... params) {
        return run(em, sql, params, statement -> first(statement, mapper));
    }

    /** The rows of a query on {@code connection} (a transaction of the caller's own), each mapped. */
    public static <T> List<T> list(Connection connection, String sql, Function<Row, T> mapper, Object... params)
            throws SQLException {
        return execute(connection, sql, params, statement -> rows(statement, mapper));
    }

    /** The first row of a query on {@code connection} (a transaction of the caller's own), mapped. */
    public static <T> Optional<T> first(Connection connection, String sql, Function<Row, T> mapper, Object... params)
            throws SQLException {
        return execute(connection, sql, params, statement -> first(statement, mapper));
    }

    /** Work on a connection of {@link #pooled}, through this class's connection forms. */
    @FunctionalInterface
    public interface Work<T> {
        T apply(Connection connection) throws SQLException;
    }

    /**
     * Runs {@code work} on a pooled connection of its own, outside the persistence context and any transaction (each
     * statement its own), and hands the connection back: for the measured hot paths that must not wait for a
     * transaction (the key check, the first dataset read, console sessions) and for threads that have none.
     */
    public static <T> T pooled(DataSource dataSource, Work<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return work.apply(connection);
        }
    }

    /**
     * Runs {@code COPY ... FROM STDIN} with {@code data} (in the statement's format) on a pooled connection: no
     * statement to plan and no text to parse, the cheapest way into PostgreSQL for many small rows.
     */
    public static void copyIn(DataSource dataSource, String copy, byte[] data) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            copyIn(connection, copy, new ByteArrayInputStream(data));
        } catch (IOException e) {
            throw new SQLException("COPY from memory failed", e);
        }
    }

    /**
     * Runs {@code COPY ... TO STDOUT} on {@code connection} (in its transaction, if it has one), writing the data to
     * {@code out} as it comes; answers the number of rows.
     */
    public static long copyOut(Connection connection, String copy, OutputStream out) throws SQLException, IOException {
        return copyManager(connection).copyOut(copy, out);
    }

    /**
     * Runs {@code COPY ... FROM STDIN} on {@code connection} (in its transaction, if it has one), reading the data from
     * {@code in} to its end; answers the number of rows.
     */
    public static long copyIn(Connection connection, String copy, InputStream in) throws SQLException, IOException {
        return copyManager(connection).copyIn(copy, in);
    }

    private static CopyManager copyManager(Connection connection) throws SQLException {
        return connection.unwrap(PGConnection.class).getCopyAPI();
    }

    /**
     * A pooled connection the caller holds (and closes) across several calls, for what lives as long as a session: a
     * session-level advisory lock held while an answer streams. Its statements go through this class's connection
     * forms.
     */
    public static Connection session(DataSource dataSource) throws SQLException {
        return dataSource.getConnection();
    }

    /** What reads a query's rows in place ({@link #read}). */
    @FunctionalInterface
    public interface Reader<T> {
        T read(Cursor rows) throws SQLException, IOException;
    }

    /**
     * Runs a query on a pooled connection of its own, outside any transaction (one statement is its own short implicit
     * one), and answers what {@code reader} made of its rows, read in place as they come: for the hot reads that write
     * their answer straight from the result, with no row copied. The connection goes back to the pool before this
     * returns.
     */
    public static <T> T read(DataSource dataSource, String sql, Reader<T> reader, Object... params)
            throws SQLException, IOException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = prepared(connection, sql, params);
                ResultSet results = statement.executeQuery()) {
            return reader.read(new Cursor(results));
        }
    }

    private static <T> List<T> rows(PreparedStatement statement, Function<Row, T> mapper) throws SQLException {
        List<T> rows = new ArrayList<>();
        try (ResultSet results = statement.executeQuery()) {
            while (results.next()) {
                rows.add(mapper.apply(Row.of(results)));
            }
        }
        return rows;
    }

    private static <T> Optional<T> first(PreparedStatement statement, Function<Row, T> mapper) throws SQLException {
        statement.setMaxRows(1);
        try (ResultSet results = statement.executeQuery()) {
            return results.next() ? Optional.ofNullable(mapper.apply(Row.of(results))) : Optional.empty();
        }
    }

    private interface Execution<T> {
        T run(PreparedStatement statement) throws SQLException;
    }

    /**
     * Runs the statement on the connection of the persistence context's transaction, through JDBC: a Hibernate native
     * query costs several times the CPU of the statement it sends (bench/metrics.sh). Entity changes not yet written
     * are flushed first, as Hibernate does before a native query, so that the statement sees them.
     */
    private static <T> T run(EntityManager em, String sql, Object[] params, Execution<T> execution) {
        return work(em, connection -> execute(connection, sql, params, execution));
    }

    /** Work on the connection of the persistence context's transaction, entity changes flushed first. */
    private static <T> T work(EntityManager em, org.hibernate.jdbc.ReturningWork<T> work) {
        SessionImplementor session = em.unwrap(SessionImplementor.class);
        if (session.isTransactionInProgress()
                && session.getPersistenceContextInternal().getNumberOfManagedEntities() > 0) {
            session.flush();
        }
        return session.doReturningWork(work);
    }

    private static <T> T execute(Connection connection, String sql, Object[] params, Execution<T> execution)
            throws SQLException {
        Positional positional = Positional.of(sql);
        try (PreparedStatement statement = connection.prepareStatement(positional.jdbc())) {
            bind(connection, statement, positional, sql, params);
            return execution.run(statement);
        }
    }

    private static PreparedStatement prepared(Connection connection, String sql, Object[] params) throws SQLException {
        Positional positional = Positional.of(sql);
        PreparedStatement statement = connection.prepareStatement(positional.jdbc());
        try {
            bind(connection, statement, positional, sql, params);
            return statement;
        } catch (SQLException | RuntimeException e) {
            statement.close();
            throw e;
        }
    }

    private static void bind(Connection connection, PreparedStatement statement, Positional positional, String sql,
            Object[] params) throws SQLException {
        for (int i = 0; i < positional.order().length; i++) {
            int index = positional.order()[i];
            if (index < 1 || index > params.length) {
                throw new IllegalArgumentException("No parameter ?" + index + " for " + sql);
            }
            bind(connection, statement, i + 1, params[index - 1], index);
        }
    }

    private static void bind(Connection connection, PreparedStatement statement, int at, Object param, int index)
            throws SQLException {
        if (param instanceof Typed<?> typed) {
            if (typed.value() == null) {
                statement.setNull(at, sqlType(typed.type()));
            } else {
                bind(connection, statement, at, typed.value(), index);
            }
        } else if (param instanceof TextArray array) {
            statement.setString(at, array.literal());
        } else if (param == null) {
            throw new IllegalArgumentException("Parameter " + index + " is null; give its type: NativeSql.typed");
        } else if (param instanceof Long[] values) {
            statement.setArray(at, connection.createArrayOf("bigint", values));
        } else if (param instanceof String[] values) {
            statement.setArray(at, connection.createArrayOf("text", values));
        } else if (param instanceof Instant instant) {
            statement.setObject(at, instant.atOffset(ZoneOffset.UTC));
        } else if (param instanceof Enum<?> value) {
            statement.setString(at, value.name());
        } else {
            statement.setObject(at, param);
        }
    }

    private static int sqlType(Class<?> type) {
        if (type == String.class) {
            return Types.VARCHAR;
        } else if (type == Long.class) {
            return Types.BIGINT;
        } else if (type == Integer.class) {
            return Types.INTEGER;
        } else if (type == Boolean.class) {
            return Types.BOOLEAN;
        } else if (type == Double.class) {
            return Types.DOUBLE;
        } else if (type == byte[].class) {
            return Types.BINARY;
        } else if (type == OffsetDateTime.class || type == Instant.class) {
            return Types.TIMESTAMP_WITH_TIMEZONE;
        }
        throw new IllegalArgumentException("No SQL type for " + type.getName());
    }

    /** A statement's {@code ?n} parameters as JDBC's {@code ?}, with the number of each in order (parsed once). */
    record Positional(String jdbc, int[] order) {

        /** Statements built from a request (the runs filter) vary in shape: a bounded cache ({@link Caches}). */
        private static final Cache<String, Positional> PARSED = Caches.bounded(Metrics.globalRegistry, "native_sql",
                2000);

        static Positional of(String sql) {
            return PARSED.get(sql, Positional::parse);
        }

        private static Positional parse(String sql) {
            StringBuilder jdbc = new StringBuilder(sql.length());
            List<Integer> order = new ArrayList<>();
            boolean quoted = false;
            for (int i = 0; i < sql.length(); i++) {
                char c = sql.charAt(i);
                if (c == '\'') {
                    quoted = !quoted;
                } else if (c == '?' && !quoted && i + 1 < sql.length() && Character.isDigit(sql.charAt(i + 1))) {
                    int end = i + 1;
                    while (end < sql.length() && Character.isDigit(sql.charAt(end))) {
                        end++;
                    }
                    order.add(Integer.parseInt(sql.substring(i + 1, end)));
                    jdbc.append('?');
                    i = end - 1;
                    continue;
                } else if (c == '?' && !quoted) {
                    throw new IllegalArgumentException("Parameters are numbered (?1, ?2, ...): " + sql);
                }
                jdbc.append(c);
            }
            return new Positional(jdbc.toString(), order.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    /** A timestamp of a native query (Hibernate answers {@link Instant} for timestamptz) in UTC; null stays null. */
    public static OffsetDateTime time(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof OffsetDateTime time) {
            return time.withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (value instanceof Instant instant) {
            return instant.atOffset(ZoneOffset.UTC);
        }
        if (value instanceof ZonedDateTime time) {
            return time.toOffsetDateTime().withOffsetSameInstant(ZoneOffset.UTC);
        }
        if (value instanceof Timestamp timestamp) {
            return timestamp.toInstant().atOffset(ZoneOffset.UTC);
        }
        throw new IllegalArgumentException("Not a timestamp: " + value.getClass().getName());
    }

    /** One row of a result, read by column index (from 0). */
    public static final class Row {

        private final Object[] values;

        private Row(Object[] values) {
            this.values = values;
        }

        /**
         * The current row of a result set: json and jsonb as their text, arrays as Java arrays, timestamps as the
         * driver reads them ({@link #time(int)} turns them into {@link OffsetDateTime}).
         */
        static Row of(ResultSet results) {
            try {
                int columns = results.getMetaData().getColumnCount();
                Object[] values = new Object[columns];
                for (int i = 0; i < columns; i++) {
                    Object value = results.getObject(i + 1);
                    if (value instanceof PGobject object) {
                        value = object.getValue();
                    } else if (value instanceof Array array) {
                        value = array.getArray();
                    }
                    values[i] = value;
                }
                return new Row(values);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        public int size() {
            return values.length;
        }

        public Object value(int column) {
            return values[column];
        }

        public String string(int column) {
            return (String) values[column];
        }

        /** A number column; null stays null. */
        public Long longValue(int column) {
            return values[column] == null ? null : ((Number) values[column]).longValue();
        }

        /** A number column; null stays null. */
        public Integer intValue(int column) {
            return values[column] == null ? null : ((Number) values[column]).intValue();
        }

        public Boolean bool(int column) {
            return (Boolean) values[column];
        }

        public OffsetDateTime time(int column) {
            return NativeSql.time(values[column]);
        }
    }

    /**
     * The rows of a result read in place, by column index (from 0), the current row only: nothing is copied, so an
     * answer can be written from it as it is read.
     */
    public static final class Cursor {

        private final ResultSet results;

        private Cursor(ResultSet results) {
            this.results = results;
        }

        /** Moves to the next row (to the first at the start); false when there is none. */
        public boolean next() throws SQLException {
            return results.next();
        }

        public String string(int column) throws SQLException {
            return results.getString(column + 1);
        }

        /** A number column; null stays null. */
        public Long longValue(int column) throws SQLException {
            long value = results.getLong(column + 1);
            return results.wasNull() ? null : value;
        }

        /** A timestamp column as {@link OffsetDateTime} (in UTC, as the driver reads timestamptz); null stays null. */
        public OffsetDateTime time(int column) throws SQLException {
            return results.getObject(column + 1, OffsetDateTime.class);
        }
    }
}

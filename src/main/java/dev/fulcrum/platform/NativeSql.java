package dev.fulcrum.platform;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import jakarta.persistence.EntityManager;

import org.hibernate.query.NativeQuery;

/**
 * Native SQL, for what PostgreSQL does better than the ORM (upserts, advisory locks, ...). Parameters are positional
 * ({@code ?1}, {@code ?2}, ...) and bound in order; a value that may be null is given with its type
 * ({@link #typed(Object, Class)}) so that PostgreSQL knows it; a list of strings is a {@link #textArray(Collection)}.
 * Rows are read by column index with typed getters ({@link Row}), timestamps as {@link OffsetDateTime} in UTC.
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
        return query(em, sql, params).executeUpdate();
    }

    /** The rows of a query, each mapped. */
    public static <T> List<T> list(EntityManager em, String sql, Function<Row, T> mapper, Object... params) {
        return query(em, sql, params).getResultList().stream().map(result -> mapper.apply(Row.of(result))).toList();
    }

    /** The first row of a query, mapped; empty when there is none. */
    public static <T> Optional<T> first(EntityManager em, String sql, Function<Row, T> mapper, Object... params) {
        List<?> rows = query(em, sql, params).setMaxResults(1).getResultList();
        return rows.isEmpty() ? Optional.empty() : Optional.ofNullable(mapper.apply(Row.of(rows.get(0))));
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static NativeQuery<?> query(EntityManager em, String sql, Object... params) {
        NativeQuery<?> query = em.createNativeQuery(sql).unwrap(NativeQuery.class);
        for (int i = 0; i < params.length; i++) {
            Object param = params[i];
            if (param instanceof Typed typed) {
                query.setParameter(i + 1, typed.value(), typed.type());
            } else if (param instanceof TextArray array) {
                query.setParameter(i + 1, array.literal(), String.class);
            } else if (param == null) {
                throw new IllegalArgumentException("Parameter " + (i + 1) + " is null; give its type: NativeSql.typed");
            } else {
                query.setParameter(i + 1, param);
            }
        }
        return query;
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

        /** A row of a result: the columns of a multi-column result, or the one value of a single-column result. */
        public static Row of(Object result) {
            return new Row(result instanceof Object[] columns ? columns : new Object[] { result });
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
}

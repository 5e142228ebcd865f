package dev.fulcrum.runs;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.runs.RunFilter.And;
import dev.fulcrum.runs.RunFilter.Column;
import dev.fulcrum.runs.RunFilter.Condition;
import dev.fulcrum.runs.RunFilter.Field;
import dev.fulcrum.runs.RunFilter.Json;
import dev.fulcrum.runs.RunFilter.Op;
import dev.fulcrum.runs.RunFilter.Or;
import dev.fulcrum.runs.RunFilter.Order;
import dev.fulcrum.runs.RunService.RunView;

/**
 * The SQL of {@link RunSearch}: a {@link RunFilter} compiled into one SQL condition whose values are all parameters
 * ({@link Sql}; a {@code $regex} condition is matched by RE2 in Java over the project's values of its field and stands
 * in the SQL as the set of ids that matched), and the count and page statements around it.
 */
final class RunSearchStatements {

    private RunSearchStatements() {
    }

    /** How many runs of the project the filter keeps. */
    static long count(EntityManager em, long projectId, RunFilter filter) {
        Sql sql = new Sql(projectId);
        String where = sql.condition(filter, em);
        return NativeSql.first(em, "select count(*) from runs r where r.project_id = ?1 and " + where,
                row -> row.longValue(0), sql.params.toArray()).orElse(0L);
    }

    /** The runs the filter keeps in the order asked: at most {@code limit + 1} from {@code offset}. */
    static List<RunView> page(EntityManager em, ProjectRef ref, StoredJson storedJson, RunFilter filter, Order order,
            int limit, int offset) {
        Sql sql = new Sql(ref.projectId());
        String where = sql.condition(filter, em);
        String direction = order.descending() ? " desc" : " asc";
        String by = sql.expression(order.field()) + direction + " nulls last, r.id" + direction;
        String limits = " limit " + sql.param(limit + 1) + " offset " + sql.param(offset);
        return NativeSql.list(em, """
                select r.id, r.name, r.display_name, cast(r.config as text), r.state,
                       (select u.username from account_names u where u.user_id = r.created_by), r.created_at,
                       r.updated_at, r.last_step, r.row_count, cast(r.summary as text), cast(to_jsonb(r.tags) as text),
                       r.notes
                from runs r where r.project_id = ?1 and\s""" + where + " order by " + by + limits,
                row -> new RunView(row.longValue(0), row.string(1), row.string(2), storedJson.readObject(row.string(3)),
                        row.string(4), row.string(5), row.time(6), row.time(7), row.longValue(8), row.longValue(9),
                        ref.entity(), ref.project(), storedJson.readObject(row.string(10)), tags(row.string(11)),
                        row.string(12)),
                sql.params.toArray());
    }

    /** The id of the project's run of that name. */
    static Optional<Long> runId(EntityManager em, long projectId, String run) {
        return NativeSql.first(em, "select r.id from runs r where r.project_id = ?1 and r.name = ?2",
                row -> row.longValue(0), projectId, run);
    }

    private static List<String> tags(String json) {
        try {
            return List.of(TAGS.readValue(json, String[].class));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("Stored tags are not a JSON array of strings", e);
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper TAGS = new com.fasterxml.jackson.databind.ObjectMapper();

    /** The SQL of a filter, with its parameters in order ({@code ?1} is the project's id). */
    static final class Sql {

        final List<Object> params = new ArrayList<>();

        Sql(long projectId) {
            params.add(projectId);
        }

        String param(Object value) {
            params.add(value);
            return "?" + params.size();
        }

        String condition(RunFilter filter, EntityManager em) {
            if (filter instanceof And and) {
                return join(and.parts(), " and ", "true", em);
            }
            if (filter instanceof Or or) {
                return join(or.parts(), " or ", "false", em);
            }
            return condition((Condition) filter, em);
        }

        private String join(List<RunFilter> parts, String joint, String empty, EntityManager em) {
            if (parts.isEmpty()) {
                return empty;
            }
            List<String> conditions = new ArrayList<>();
            for (RunFilter part : parts) {
                conditions.add(condition(part, em));
            }
            return "(" + String.join(joint, conditions) + ")";
        }

        /** The SQL value of a field: a column, or the JSON value at a path of the config or summary. */
        String expression(Field field) {
            return switch (field.column()) {
                case NAME -> "r.name";
                case DISPLAY_NAME -> "r.display_name";
                case STATE -> "r.state";
                case CREATED_AT -> "r.created_at";
                case UPDATED_AT -> "r.updated_at";
                case TAGS -> "r.tags";
                case CONFIG -> "(r.config #> cast(" + param(NativeSql.textArray(field.path())) + " as text[]))";
                case SUMMARY -> "(r.summary #> cast(" + param(NativeSql.textArray(field.path())) + " as text[]))";
            };
        }

        private String condition(Condition condition, EntityManager em) {
            Field field = condition.field();
            Op op = condition.op();
            Object value = condition.value();
            if (op == Op.REGEX) {
                return "r.id = any(cast(" + param(matching(field, value, em)) + " as bigint[]))";
            }
            String x = expression(field);
            if (op == Op.EXISTS) {
                boolean exists = (Boolean) value;
                if (field.column() == Column.TAGS) {
                    return exists ? "cardinality(r.tags) > 0" : "cardinality(r.tags) = 0";
                }
                return x + (exists ? " is not null" : " is null");
            }
            if (field.column() == Column.TAGS) {
                return tags(op, value);
            }
            if (field.column().json()) {
                return json(x, op, value);
            }
            String type = field.column() == Column.CREATED_AT || field.column() == Column.UPDATED_AT ? "timestamptz"
                    : "text";
            return switch (op) {
                case EQ -> value == null ? x + " is null" : x + " = " + typed(value, type);
                case NE -> value == null ? x + " is not null" : x + " is distinct from " + typed(value, type);
                case GT -> x + " > " + typed(value, type);
                case GTE -> x + " >= " + typed(value, type);
                case LT -> x + " < " + typed(value, type);
                case LTE -> x + " <= " + typed(value, type);
                case IN -> "coalesce(" + x + " = any(cast(" + param(texts(value)) + " as text[])), false)";
                case NIN -> "not coalesce(" + x + " = any(cast(" + param(texts(value)) + " as text[])), false)";
                default -> throw new IllegalArgumentException(op.name());
            };
        }

        private String typed(Object value, String type) {
            return "cast(" + param(value) + " as " + type + ")";
        }

        private String tags(Op op, Object value) {
            return switch (op) {
                case EQ -> "coalesce(cast(" + param(value) + " as text) = any(r.tags), false)";
                case NE -> "not coalesce(cast(" + param(value) + " as text) = any(r.tags), false)";
                case IN -> "r.tags && cast(" + param(texts(value)) + " as text[])";
                case NIN -> "not (r.tags && cast(" + param(texts(value)) + " as text[]))";
                default -> throw new IllegalArgumentException(op.name());
            };
        }

        /** A comparison of a JSON value: equality as jsonb, order between numbers or between strings only. */
        private String json(String x, Op op, Object value) {
            return switch (op) {
                case EQ -> value == null ? "(" + x + " is null or " + x + " = 'null'::jsonb)"
                        : "coalesce(" + x + " = " + jsonb(value) + ", false)";
                case NE -> value == null ? "(" + x + " is not null and " + x + " <> 'null'::jsonb)"
                        : "not coalesce(" + x + " = " + jsonb(value) + ", false)";
                case GT -> ordered(x, ">", value);
                case GTE -> ordered(x, ">=", value);
                case LT -> ordered(x, "<", value);
                case LTE -> ordered(x, "<=", value);
                case IN -> "coalesce(" + x + " = any(" + jsonbs(value) + "), false)";
                case NIN -> "not coalesce(" + x + " = any(" + jsonbs(value) + "), false)";
                default -> throw new IllegalArgumentException(op.name());
            };
        }

        private String jsonb(Object value) {
            return "cast(" + param(((Json) value).text()) + " as jsonb)";
        }

        private String jsonbs(Object values) {
            List<String> texts = ((List<?>) values).stream().map(value -> ((Json) value).text()).toList();
            return "cast(cast(" + param(NativeSql.textArray(texts)) + " as text[]) as jsonb[])";
        }

        private String ordered(String x, String comparison, Object value) {
            if (value instanceof BigDecimal number) {
                return "coalesce((case when jsonb_typeof(" + x + ") = 'number' then cast(" + x + " as numeric) end) "
                        + comparison + " cast(" + param(number) + " as numeric), false)";
            }
            return "coalesce((case when jsonb_typeof(" + x + ") = 'string' then " + x + " #>> '{}' end) " + comparison
                    + " cast(" + param(value) + " as text), false)";
        }

        private static NativeSql.TextArray texts(Object values) {
            return NativeSql.textArray(((List<?>) values).stream().map(String.class::cast).toList());
        }

        /** The ids of the project's runs whose field (a string, or any of its tags) the regex finds a match in. */
        private Long[] matching(Field field, Object pattern, EntityManager em) {
            List<Long> ids = new ArrayList<>();
            String project = "?1";
            String sql = switch (field.column()) {
                case TAGS -> "select r.id, t from runs r, unnest(r.tags) t where r.project_id = " + project;
                case CONFIG, SUMMARY -> {
                    String x = expression(field);
                    yield "select r.id, " + x + " #>> '{}' from runs r where r.project_id = " + project
                            + " and jsonb_typeof(" + x + ") = 'string'";
                }
                case CREATED_AT, UPDATED_AT -> throw new IllegalArgumentException(field.column().name());
                default -> "select r.id, " + expression(field) + " from runs r where r.project_id = " + project;
            };
            Map<Long, Boolean> seen = new java.util.HashMap<>();
            NativeSql.list(em, sql, row -> {
                long id = row.longValue(0);
                if (!seen.containsKey(id) && RunFilter.matches(pattern, row.string(1))) {
                    seen.put(id, true);
                    ids.add(id);
                }
                return null;
            }, params.toArray());
            return ids.toArray(Long[]::new);
        }
    }

    /** For tests: the SQL condition of a filter and its parameters after the project's id. */
    static Map.Entry<String, List<Object>> sqlOf(RunFilter filter) {
        Sql sql = new Sql(0);
        String where = sql.condition(filter, null);
        return Map.entry(where, sql.params.subList(1, sql.params.size()));
    }
}

package dev.fulcrum.traces;

import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.sql.DataSource;

import jakarta.persistence.EntityManager;

import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.model.CallSortBy;
import dev.fulcrum.datasets.api.model.CallsFilter;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.traces.CallQueries.Query;

/**
 * The SQL of {@link CallQueries}: the caller's access and a call or a page of calls in one statement (filters, Weave's
 * query language through {@link ExpressionStatements}, sort, limit and offset over the indexes of V77), and a query's
 * count.
 */
final class CallQueryStatements {

    /** At most this many calls per query. */
    static final int MAX_PAGE = 10_000;

    static final Map<String, ExpressionStatements.Column> FIELDS = Map.ofEntries(
            Map.entry("id", new ExpressionStatements.Column("c.id", false)),
            Map.entry("trace_id", new ExpressionStatements.Column("c.trace_id", false)),
            Map.entry("parent_id", new ExpressionStatements.Column("c.parent_id", false)),
            Map.entry("op_name", new ExpressionStatements.Column("c.op_name", false)),
            Map.entry("display_name", new ExpressionStatements.Column("c.display_name", false)),
            Map.entry("thread_id", new ExpressionStatements.Column("c.thread_id", false)),
            Map.entry("turn_id", new ExpressionStatements.Column("c.turn_id", false)),
            Map.entry("exception", new ExpressionStatements.Column("c.exception", false)),
            Map.entry("wb_user_id", new ExpressionStatements.Column("c.wb_user_id", false)),
            Map.entry("wb_run_id", new ExpressionStatements.Column("c.wb_run_id", false)),
            Map.entry("started_at", new ExpressionStatements.Column("c.started_at", true)),
            Map.entry("ended_at", new ExpressionStatements.Column("c.ended_at", true)),
            Map.entry("inputs.*", new ExpressionStatements.Column("c.inputs", false)),
            Map.entry("output.*", new ExpressionStatements.Column("c.output", false)),
            Map.entry("attributes.*", new ExpressionStatements.Column("c.attributes", false)),
            Map.entry("summary.*", new ExpressionStatements.Column("c.summary", false)),
            Map.entry("summary.weave.status",
                    new ExpressionStatements.Column(
                            "(case when c.exception is not null then 'error' when c.ended_at is null then 'running'"
                                    + " else 'success' end)",
                            false)),
            // as CallJson derives them: the display name or the op's short name; whole milliseconds, as text
            // like every field that is not a time (compared as numbers through $convert)
            Map.entry("summary.weave.trace_name",
                    new ExpressionStatements.Column("coalesce(c.display_name, case when c.op_name like 'weave:%'"
                            + " then regexp_replace(regexp_replace(c.op_name, '^.*/', ''), '(.):[^:]*$', '\\1')"
                            + " else regexp_replace(c.op_name, '^.*/', '') end)", false)),
            Map.entry("summary.weave.latency_ms", new ExpressionStatements.Column(
                    "cast(cast(trunc(extract(epoch from (c.ended_at - c.started_at)) * 1000) as bigint) as text)",
                    false)));

    /** The call's columns a query may sort by; a missing value sorts first ascending (as the default order). */
    private static final Set<String> SORTABLE = Set.of("id", "trace_id", "parent_id", "op_name", "display_name",
            "thread_id", "turn_id", "exception", "wb_user_id", "wb_run_id", "started_at", "ended_at");

    /** The JSON columns whose key paths a query may sort by. */
    private static final Set<String> SORTABLE_JSON = Set.of("inputs", "output", "attributes", "summary");

    /** The derived {@code summary.weave} fields a query may sort by, as SQL; a missing value sorts last ascending. */
    private static final Map<String, String> SORTABLE_DERIVED = Map.of("summary.weave.status",
            FIELDS.get("summary.weave.status").sql(), "summary.weave.trace_name",
            FIELDS.get("summary.weave.trace_name").sql(), "summary.weave.latency_ms", "(c.ended_at - c.started_at)");

    /**
     * Each call's feedback (a statement's last column when a query includes it), as {@code /feedback/query} answers it,
     * oldest first; its parameters are the prefix of the project's call refs ({@code weave:///entity/project/call/})
     * and the project's name.
     */
    private static final String FEEDBACK = """
            (select json_agg(json_build_object('id', f.id, 'project_id', cast(%2$s as text), 'weave_ref', f.weave_ref,
                'feedback_type', f.feedback_type, 'payload', cast(f.payload as json), 'creator', f.creator,
                'annotation_ref', f.annotation_ref, 'runnable_ref', f.runnable_ref, 'call_ref', f.call_ref,
                'trigger_ref', f.trigger_ref, 'wb_user_id', f.wb_user_id,
                'created_at', to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                order by f.created_at, f.id)
            from weave_feedback f where f.project_id = c.project_id and f.weave_ref = cast(%1$s as text) || c.id)""";

    /**
     * The entity, the caller's stored role on it (null if not a member) and its project of that name (or null); a
     * statement's first three columns. Its parameters are the caller's user id, the project and the entity.
     */
    private static final String READABLE = """
            select e.entity_id, m.role, p.project_id from entity_names e
            left join memberships m on m.entity_id = e.entity_id and m.user_id = ?1
            left join project_names p on p.entity_id = e.entity_id and p.name = ?2
            where e.name = ?3""";

    /** Where the call's columns start in a row of {@link #read}'s statement (after {@link #READABLE}'s). */
    static final int CALL = 3;

    /**
     * The first condition on the calls a read selects, its parameter whether the caller is a server administrator: they
     * are read only for a caller with a role on the entity, so that a refused caller costs no page's scan. The decision
     * itself is {@code Access.authorize}'s.
     */
    private static final String READER = "(a.role is not null or ?4)";

    private static final String SELECT = "select " + CallJson.COLUMNS + " from weave_calls c";

    private CallQueryStatements() {
    }

    /**
     * Runs {@link #READABLE} and, unless null, the statement {@code calls} selecting the calls ({@code params} those of
     * both) as one, on a pooled connection outside any transaction; answers what {@code reader} made of its rows.
     */
    static <T> T read(DataSource dataSource, String calls, List<Object> params, NativeSql.Reader<T> reader)
            throws SQLException, IOException {
        String sql = calls != null
                ? "select a.*, c.* from (" + READABLE + ") a left join lateral (" + calls + ") c on true"
                : READABLE;
        return NativeSql.read(dataSource, sql, reader, params.toArray());
    }

    /** The statement of one call of the project {@code a.project_id}, its parameters added to {@code params}. */
    static String call(List<Object> params, String id) {
        return SELECT + " where " + READER + " and " + where("a.project_id", params, null) + " and c.id = "
                + NativeSql.param(params, id);
    }

    /** How many calls of the project a query selects. */
    static long count(EntityManager em, long projectId, Query query) {
        List<Object> params = new ArrayList<>();
        String where = where(NativeSql.param(params, projectId), params, query);
        String sql = query.limit() == null ? "select count(*) from weave_calls c where " + where
                : "select count(*) from (select 1 from weave_calls c where " + where + " limit "
                        + NativeSql.param(params, query.limit()) + ") l";
        return NativeSql.first(em, sql, row -> row.longValue(0), params.toArray()).orElseThrow();
    }

    /**
     * A page's statement, the project being {@code a.project_id}, its parameters added to {@code params}: the filters,
     * the order (the sort fields, then id), the limit and the offset.
     */
    static String page(List<Object> params, Query query, WeaveObjects.ProjectName name) {
        StringBuilder sql = new StringBuilder("select ").append(CallJson.COLUMNS);
        if (query.feedback()) {
            sql.append(", ").append(FEEDBACK.formatted(NativeSql.param(params, "weave:///" + name.id() + "/call/"),
                    NativeSql.param(params, name.id())));
        }
        sql.append(" from weave_calls c where ").append(READER).append(" and ")
                .append(where("a.project_id", params, query)).append(" order by ");
        List<CallSortBy> sortBy = query.sortBy() == null ? List.of() : query.sortBy();
        for (int i = 0; i < sortBy.size(); i++) {
            sql.append(sortKey(sortBy.get(i), params, i)).append(", ");
        }
        sql.append(sortBy.isEmpty() ? "c.started_at asc nulls first, c.id asc" : "c.id asc");
        int limit = query.limit() == null ? MAX_PAGE : query.limit();
        if (limit > MAX_PAGE) {
            throw ApiException.invalid(
                    Violation.of("At most " + MAX_PAGE + " calls per query", "less_than_equal", "body", "limit"));
        }
        sql.append(" limit ").append(NativeSql.param(params, limit)).append(" offset ")
                .append(NativeSql.param(params, query.offset() == null ? 0 : query.offset()));
        return sql.toString();
    }

    /**
     * The SQL of one {@code sort_by} item: a column (missing values first ascending, as the default order), a derived
     * {@code summary.weave} field, or a key path into a JSON column compared as jsonb (numbers by value, text by text,
     * values of different types in jsonb's order; missing values last ascending, as a table's rows sort).
     */
    private static String sortKey(CallSortBy sort, List<Object> params, int i) {
        String field = sort.getField();
        boolean desc = sort.getDirection() == CallSortBy.DirectionEnum.DESC;
        if (SORTABLE.contains(field)) {
            return "c." + field + (desc ? " desc nulls last" : " asc nulls first");
        }
        String derived = SORTABLE_DERIVED.get(field);
        int dot = field.indexOf('.');
        if (derived == null && dot > 0 && SORTABLE_JSON.contains(field.substring(0, dot))) {
            String[] path = field.substring(dot + 1).split("\\.", -1);
            if (java.util.Arrays.stream(path).noneMatch(String::isEmpty)) {
                derived = "(cast(c." + field.substring(0, dot) + " as jsonb) #> " + NativeSql.param(params, path) + ")";
            }
        }
        if (derived == null) {
            throw ApiException.invalid(Violation.of(
                    "Sortable fields: " + String.join(", ", new java.util.TreeSet<>(SORTABLE)) + ", "
                            + String.join(", ", new java.util.TreeSet<>(SORTABLE_DERIVED.keySet()))
                            + " and key paths below " + String.join(", ", new java.util.TreeSet<>(SORTABLE_JSON)),
                    "value_error", "body", "sort_by", i, "field"));
        }
        return derived + (desc ? " desc nulls first" : " asc nulls last");
    }

    /**
     * The conditions of a query (none when null) on the calls of {@code project}, their parameters added to
     * {@code params}.
     */
    private static String where(String project, List<Object> params, Query query) {
        StringBuilder where = new StringBuilder("c.project_id = ").append(project).append(" and c.deleted_at is null");
        if (query == null) {
            return where.toString();
        }
        CallsFilter filter = query.filter();
        if (filter != null) {
            refs(where, params, "c.inputs", filter.getInputRefs());
            refs(where, params, "c.output", filter.getOutputRefs());
            if (filter.getOpNames() != null && !filter.getOpNames().isEmpty()) {
                List<String> exact = new ArrayList<>();
                List<String> prefixes = new ArrayList<>();
                for (String op : filter.getOpNames()) {
                    if (op.endsWith(":*")) {
                        prefixes.add(op.substring(0, op.length() - 1).replace("\\", "\\\\").replace("%", "\\%")
                                .replace("_", "\\_") + "%");
                    } else {
                        exact.add(op);
                    }
                }
                where.append(" and (c.op_name = any(").append(NativeSql.param(params, exact.toArray(String[]::new)))
                        .append(") or c.op_name like any(")
                        .append(NativeSql.param(params, prefixes.toArray(String[]::new))).append("))");
            }
            any(where, params, "c.parent_id", filter.getParentIds());
            any(where, params, "c.trace_id", filter.getTraceIds());
            any(where, params, "c.id", filter.getCallIds());
            any(where, params, "c.thread_id", filter.getThreadIds());
            any(where, params, "c.turn_id", filter.getTurnIds());
            any(where, params, "c.wb_user_id", filter.getWbUserIds());
            any(where, params, "c.wb_run_id", filter.getWbRunIds());
            if (Boolean.TRUE.equals(filter.getTraceRootsOnly())) {
                where.append(" and c.parent_id is null");
            }
        }
        if (query.expr() != null && !query.expr().isNull()) {
            where.append(" and (")
                    .append(ExpressionStatements.compile(query.expr(), FIELDS, params, "body", "query", "$expr"))
                    .append(")");
        }
        return where.toString();
    }

    /**
     * Calls whose JSON column holds one of the refs as a string value at any depth, as the hosted trace server's
     * input_refs and output_refs (refs found anywhere in the values). Not indexed: a scan of what the other filters
     * leave, which is why the SDK pairs it with an op name.
     */
    private static void refs(StringBuilder where, List<Object> params, String column, List<String> refs) {
        if (refs != null && !refs.isEmpty()) {
            where.append(" and exists (select 1 from unnest(")
                    .append(NativeSql.param(params, refs.toArray(String[]::new)))
                    .append("::text[]) r(ref) where jsonb_path_exists(").append(column)
                    .append("::jsonb, 'strict $.** ? (@ == $ref)', jsonb_build_object('ref', r.ref)))");
        }
    }

    private static void any(StringBuilder where, List<Object> params, String column, List<String> values) {
        if (values != null && !values.isEmpty()) {
            where.append(" and ").append(column).append(" = any(")
                    .append(NativeSql.param(params, values.toArray(String[]::new))).append(")");
        }
    }
}

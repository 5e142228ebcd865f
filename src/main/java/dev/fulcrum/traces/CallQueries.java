package dev.fulcrum.traces;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.model.CallSortBy;
import dev.fulcrum.datasets.api.model.CallsFilter;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Reads of Weave's calls: one call, a page of a query (filters, the query language, sort, limit and offset in SQL over
 * the indexes of V77) and a query's count.
 */
@ApplicationScoped
public class CallQueries {

    /** At most this many calls per query. */
    static final int MAX_PAGE = 10_000;

    static final Map<String, CallExpressions.Column> FIELDS = Map.ofEntries(
            Map.entry("id", new CallExpressions.Column("c.id", false)),
            Map.entry("trace_id", new CallExpressions.Column("c.trace_id", false)),
            Map.entry("parent_id", new CallExpressions.Column("c.parent_id", false)),
            Map.entry("op_name", new CallExpressions.Column("c.op_name", false)),
            Map.entry("display_name", new CallExpressions.Column("c.display_name", false)),
            Map.entry("thread_id", new CallExpressions.Column("c.thread_id", false)),
            Map.entry("turn_id", new CallExpressions.Column("c.turn_id", false)),
            Map.entry("exception", new CallExpressions.Column("c.exception", false)),
            Map.entry("wb_user_id", new CallExpressions.Column("c.wb_user_id", false)),
            Map.entry("wb_run_id", new CallExpressions.Column("c.wb_run_id", false)),
            Map.entry("started_at", new CallExpressions.Column("c.started_at", true)),
            Map.entry("ended_at", new CallExpressions.Column("c.ended_at", true)),
            Map.entry("inputs.*", new CallExpressions.Column("c.inputs", false)),
            Map.entry("output.*", new CallExpressions.Column("c.output", false)),
            Map.entry("attributes.*", new CallExpressions.Column("c.attributes", false)),
            Map.entry("summary.*", new CallExpressions.Column("c.summary", false)),
            Map.entry("summary.weave.status",
                    new CallExpressions.Column(
                            "(case when c.exception is not null then 'error' when c.ended_at is null then 'running'"
                                    + " else 'success' end)",
                            false)),
            // as CallJson derives them: the display name or the op's short name; whole milliseconds, as text
            // like every field that is not a time (compared as numbers through $convert)
            Map.entry("summary.weave.trace_name",
                    new CallExpressions.Column("coalesce(c.display_name, case when c.op_name like 'weave:%'"
                            + " then regexp_replace(regexp_replace(c.op_name, '^.*/', ''), '(.):[^:]*$', '\\1')"
                            + " else regexp_replace(c.op_name, '^.*/', '') end)", false)),
            Map.entry("summary.weave.latency_ms", new CallExpressions.Column(
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

    static final List<String> COLUMNS = List.of("id", "project_id", "op_name", "display_name", "trace_id", "parent_id",
            "thread_id", "turn_id", "started_at", "ended_at", "exception", "attributes", "inputs", "output", "summary",
            "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end", "deleted_at");
    private static final Set<String> ALWAYS = Set.of("id", "project_id", "trace_id", "op_name", "started_at");
    private static final Set<String> ALL = Set.copyOf(COLUMNS);
    /** Where the call's columns start in a row of {@link #readOnly}'s statement (after {@link #READABLE}'s). */
    private static final int CALL = 3;

    /**
     * The entity, the caller's stored role on it (null if not a member) and its project of that name (or null); a
     * statement's first three columns. Its parameters are the caller's user id, the project and the entity.
     */
    private static final String READABLE = """
            select e.entity_id, m.role, p.project_id from entity_names e
            left join memberships m on m.entity_id = e.entity_id and m.user_id = ?1
            left join project_names p on p.entity_id = e.entity_id and p.name = ?2
            where e.name = ?3""";

    /**
     * The first condition on the calls a read selects, its parameter whether the caller is a server administrator: they
     * are read only for a caller with a role on the entity, so that a refused caller costs no page's scan. The decision
     * itself is {@link Access#authorize}'s.
     */
    private static final String READER = "(a.role is not null or ?4)";

    private static final String SELECT = "select " + CallJson.COLUMNS + " from weave_calls c";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    ObjectMapper json;

    private CallJson calls;

    @PostConstruct
    void answers() {
        calls = new CallJson(json);
    }

    /** What a query asks for; {@code feedback}: each call's feedback in {@code summary.weave.feedback}. */
    public record Query(CallsFilter filter, JsonNode expr, List<CallSortBy> sortBy, Integer limit, Integer offset,
            boolean feedback) {
    }

    /*
     * call/read and calls/stream_query run one statement, outside any transaction (a single statement is its own short
     * implicit one) on a pooled connection: the caller's stored role on the entity, the project, and the calls, the
     * calls only when the caller may read them. The answer is written straight from the result set. A page of 100 over
     * 1,000,000 calls spent most of its time outside its 1.7 ms statement when it went through a JTA transaction (a
     * commit round trip), a statement of its own for the access check and a record per call (bench/README.md,
     * "Weave calls").
     */

    /** {@code {"call": call}}, or {@code {"call": null}} when the project has no such call. */
    public byte[] read(WeaveObjects.ProjectName name, String id) {
        List<Object> params = readable(name);
        String call = SELECT + " where " + READER + " and " + where("a.project_id", params, null) + " and c.id = "
                + NativeSql.param(params, id);
        return readOnly(name, call, params, null, (results, out) -> {
            out.writeStartObject();
            out.writeFieldName("call");
            if (results.string(CALL) != null) {
                calls.write(results, CALL, name.id(), ALL, null, out);
            } else {
                out.writeNull();
            }
            out.writeEndObject();
        });
    }

    /** The calls a query selects, in its order, as JSON Lines: one call (its {@code columns}) per line. */
    public byte[] query(WeaveObjects.ProjectName name, Query query, Set<String> columns) {
        List<Object> params = readable(name);
        String page = null;
        ApiException invalid = null;
        try {
            page = page(params, query, name);
        } catch (ApiException e) {
            invalid = e; // answered once the caller's access is known, as a 403 or 404 comes first
        }
        return readOnly(name, page, params, invalid, (results, out) -> {
            // one generator for the whole page: each call a root value ending in its own newline, with no
            // separator of Jackson's between them
            out.setRootValueSeparator(null);
            if (results.string(CALL) != null) {
                do {
                    String feedback = query.feedback() ? results.string(CALL + CallJson.COUNT) : null;
                    calls.write(results, CALL, name.id(), columns,
                            query.feedback() && feedback == null ? "[]" : feedback, out);
                    out.writeRaw('\n');
                } while (results.next());
            }
        });
    }

    /** How many calls a query selects. */
    @Transactional
    public long count(WeaveObjects.ProjectName name, Query query) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<Object> params = new ArrayList<>();
        String where = where(NativeSql.param(params, ref.projectId()), params, query);
        String sql = query.limit() == null ? "select count(*) from weave_calls c where " + where
                : "select count(*) from (select 1 from weave_calls c where " + where + " limit "
                        + NativeSql.param(params, query.limit()) + ") l";
        return NativeSql.first(em, sql, row -> row.longValue(0), params.toArray()).orElseThrow();
    }

    /**
     * Which of the call's columns a query's {@code columns} keeps (all when null or empty); with {@code feedback} the
     * summary too, where the feedback is.
     */
    static Set<String> columns(List<String> requested, boolean feedback) {
        if (requested == null || requested.isEmpty()) {
            return ALL;
        }
        Set<String> kept = new java.util.HashSet<>(ALWAYS);
        if (feedback) {
            kept.add("summary");
        }
        for (String column : requested) {
            // nested columns (inputs.x, summary.weave.status) keep their top-level column
            String top = column.contains(".") ? column.substring(0, column.indexOf('.')) : column;
            if (COLUMNS.contains(top)) {
                kept.add(top);
            }
        }
        return kept;
    }

    /** {@link #READABLE}'s and {@link #READER}'s parameters, the first of a read's statement. */
    private List<Object> readable(WeaveObjects.ProjectName name) {
        Caller caller = access.caller();
        return new ArrayList<>(List.of(caller.userId(), name.project(), name.entity(), caller.admin()));
    }

    /** Writes what a statement selected, from its first row on (a row without a call when none was selected). */
    private interface Answer {
        void write(NativeSql.Cursor results, JsonGenerator out) throws SQLException, IOException;
    }

    /**
     * The caller's access and the calls {@code calls} selects ({@code params} those of both), in one statement; answers
     * what {@code answer} wrote, once the caller may read the project (403 or 404 otherwise, and before
     * {@code invalid}, a refusal of the request that left no statement to run). The answer is written whole before it
     * is sent, so that the connection goes back to the pool at once however slowly the client reads, and a failure is
     * still an error in the interface's shape.
     */
    private byte[] readOnly(WeaveObjects.ProjectName name, String calls, List<Object> params, ApiException invalid,
            Answer answer) {
        String sql = invalid == null
                ? "select a.*, c.* from (" + READABLE + ") a left join lateral (" + calls + ") c on true"
                : READABLE;
        try {
            return NativeSql.read(dataSource, sql, results -> {
                if (!results.next()) {
                    throw ApiException.notFound("Entity " + name.entity() + " not found");
                }
                Long projectId = results.longValue(2);
                access.authorize(name.entity(), name.project(), results.longValue(0), projectId, results.string(1),
                        Role.VIEWER);
                if (projectId == null) {
                    throw ApiException.notFound("Project " + name.entity() + "/" + name.project() + " not found");
                }
                if (invalid != null) {
                    throw invalid;
                }
                ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 * 1024);
                try (JsonGenerator out = json.getFactory().createGenerator(bytes)) {
                    answer.write(results, out);
                }
                return bytes.toByteArray();
            }, params.toArray());
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        } catch (IOException e) {
            throw new UncheckedIOException("Calls could not be written as JSON", e);
        }
    }

    /**
     * A page's statement, the project being {@code a.project_id}, its parameters added to {@code params}: the filters,
     * the order (the sort fields, then id), the limit and the offset.
     */
    private static String page(List<Object> params, Query query, WeaveObjects.ProjectName name) {
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
                    .append(CallExpressions.compile(query.expr(), FIELDS, params, "body", "query", "$expr"))
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

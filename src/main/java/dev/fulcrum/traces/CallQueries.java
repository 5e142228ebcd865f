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
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.NativeSql;

/**
 * Reads of Weave's calls: one call, a page of a query (filters, the query language, sort, limit and offset in SQL over
 * the indexes of V77) and a query's count.
 */
@ApplicationScoped
public class CallQueries {

    /** At most this many calls per query. */
    static final int MAX_PAGE = 10_000;

    static final Map<String, CallExpressions.Column> FIELDS = Map
            .ofEntries(Map.entry("id", new CallExpressions.Column("c.id", false)),
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
                    Map.entry("summary.weave.status", new CallExpressions.Column(
                            "(case when c.exception is not null then 'error' when c.ended_at is null then 'running'"
                                    + " else 'success' end)",
                            false)));

    private static final Map<String, String> SORTABLE = Map.of("id", "c.id", "trace_id", "c.trace_id", "op_name",
            "c.op_name", "display_name", "c.display_name", "started_at", "c.started_at", "ended_at", "c.ended_at");

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

    /** What a query asks for. */
    public record Query(CallsFilter filter, JsonNode expr, List<CallSortBy> sortBy, Integer limit, Integer offset) {
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
                calls.write(results, CALL, name.id(), ALL, out);
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
            page = page(params, query);
        } catch (ApiException e) {
            invalid = e; // answered once the caller's access is known, as a 403 or 404 comes first
        }
        return readOnly(name, page, params, invalid, (results, out) -> {
            // one generator for the whole page: each call a root value ending in its own newline, with no
            // separator of Jackson's between them
            out.setRootValueSeparator(null);
            if (results.string(CALL) != null) {
                do {
                    calls.write(results, CALL, name.id(), columns, out);
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

    /** Which of the call's columns a query's {@code columns} keeps (all when null or empty). */
    static Set<String> columns(List<String> requested) {
        if (requested == null || requested.isEmpty()) {
            return ALL;
        }
        Set<String> kept = new java.util.HashSet<>(ALWAYS);
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
    private static String page(List<Object> params, Query query) {
        StringBuilder sql = new StringBuilder(SELECT).append(" where ").append(READER).append(" and ")
                .append(where("a.project_id", params, query)).append(" order by ");
        List<CallSortBy> sortBy = query.sortBy() == null ? List.of() : query.sortBy();
        for (int i = 0; i < sortBy.size(); i++) {
            CallSortBy sort = sortBy.get(i);
            String column = SORTABLE.get(sort.getField().toString());
            if (column == null) {
                throw ApiException.invalid(Violation.of(
                        "Sortable fields: " + String.join(", ", new java.util.TreeSet<>(SORTABLE.keySet())),
                        "value_error", "body", "sort_by", i, "field"));
            }
            boolean desc = sort.getDirection() == CallSortBy.DirectionEnum.DESC;
            sql.append(column).append(desc ? " desc nulls last, " : " asc nulls first, ");
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

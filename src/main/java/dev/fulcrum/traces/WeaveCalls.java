package dev.fulcrum.traces;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.datasets.DatasetService;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.model.CallEndSchema;
import dev.fulcrum.datasets.api.model.CallStartSchema;
import dev.fulcrum.datasets.api.model.CallsFilter;
import dev.fulcrum.datasets.api.model.CompletedCallSchema;
import dev.fulcrum.datasets.api.model.SortBy;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.CanonicalJson;

/**
 * Weave's calls in {@code weave_calls}: starts, ends and whole calls are upserts by (project, id), so that an end may
 * arrive before its start and a retried batch changes nothing; reads filter, sort and page in SQL over the indexes of
 * V77. JSON values are stored as the text that was sent, keys in their order.
 */
@ApplicationScoped
public class WeaveCalls {

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
    /** Where {@link #SELECT}'s columns start in a statement of {@link #readOnly}. */
    private static final int CALL = 3;
    /**
     * The first condition on the calls a read selects, its first parameter whether the caller is a server
     * administrator: they are read only for a caller with a role on the entity, so that a refused caller costs no
     * page's scan. The decision itself is {@link Access#authorize}'s.
     */
    private static final String READER = "(a.role is not null or ?)";

    /**
     * The entity, the caller's stored role on it (null if not a member) and its project of that name (or null); a
     * statement's first three columns.
     */
    private static final String READABLE = """
            select e.entity_id, m.role, p.id as project_id from entity_names e
            left join memberships m on m.entity_id = e.entity_id and m.user_id = ?
            left join projects p on p.entity_id = e.entity_id and p.name = ?
            where e.name = ?""";

    private static final String SELECT = """
            select c.id, c.op_name, c.display_name, c.trace_id, c.parent_id, c.thread_id, c.turn_id, c.started_at,
                   c.ended_at, c.exception, c.attributes, c.inputs, c.output, c.summary, c.wb_user_id, c.wb_run_id,
                   c.wb_run_step, c.wb_run_step_end, c.deleted_at
            from weave_calls c""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    ObjectMapper json;

    /** What a query asks for. */
    public record Query(CallsFilter filter, JsonNode expr, List<SortBy> sortBy, Integer limit, Integer offset) {
    }

    public record Started(String id, String traceId) {
    }

    // ---- writes

    /** Stores starts (each item's own project, every one writable by the caller); answers their ids. */
    @Transactional
    public List<Started> start(List<CallStartSchema> starts, WeaveObjects.ProjectName only, Object... loc) {
        List<Started> started = new ArrayList<>(starts.size());
        Map<String, Long> projects = new LinkedHashMap<>();
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < starts.size(); i++) {
            CallStartSchema s = starts.get(i);
            Object[] at = DatasetService.at(loc, i);
            long projectId = project(projects, s.getProjectId(), only, at);
            String id = s.getId() == null || s.getId().isEmpty() ? UUID.randomUUID().toString() : s.getId();
            String traceId = s.getTraceId() == null || s.getTraceId().isEmpty() ? UUID.randomUUID().toString()
                    : s.getTraceId();
            requireText(s.getOpName(), DatasetService.at(at, "op_name"));
            requireTime(s.getStartedAt(), DatasetService.at(at, "started_at"));
            rows.add(new Object[] { projectId, id, traceId, s.getParentId(), s.getOpName(), s.getDisplayName(),
                    s.getThreadId(), s.getTurnId(), ts(s.getStartedAt()), json(s.getAttributes(), at, "attributes"),
                    json(s.getInputs(), at, "inputs"), access.caller().username(), s.getWbRunId(), s.getWbRunStep() });
            started.add(new Started(id, traceId));
        }
        batch(START_UPSERT, rows);
        return started;
    }

    /** The columns of a call's start, an end and a whole call, in the order of a row's values. */
    private static final List<String> START = List.of("project_id", "id", "trace_id", "parent_id", "op_name",
            "display_name", "thread_id", "turn_id", "started_at", "attributes", "inputs", "wb_user_id", "wb_run_id",
            "wb_run_step");
    private static final List<String> END = List.of("project_id", "id", "ended_at", "exception", "output", "summary",
            "wb_run_step_end");
    private static final List<String> COMPLETE = List.of("project_id", "id", "trace_id", "parent_id", "op_name",
            "display_name", "thread_id", "turn_id", "started_at", "ended_at", "exception", "attributes", "inputs",
            "output", "summary", "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end");
    private static final int DISPLAY_NAME = COMPLETE.indexOf("display_name");
    /** The columns of numbers (the others go as text, times and JSON cast by the statement). */
    private static final Set<String> NUMBERS = Set.of("project_id", "wb_run_step", "wb_run_step_end");
    private static final Set<String> TIMES = Set.of("started_at", "ended_at");
    private static final String START_UPSERT = upsert(START);
    private static final String END_UPSERT = upsert(END);
    private static final String COMPLETE_UPSERT = unnestUpsert(COMPLETE);

    /**
     * Writes the columns of a call (a row of parameters); a call already there takes the values, except its display
     * name where it has one (a call renamed, or started twice, keeps the name it has).
     */
    private static String upsert(List<String> columns) {
        return "insert into weave_calls (" + String.join(", ", columns) + ") values ("
                + String.join(", ", Collections.nCopies(columns.size(), "?")) + ")" + onConflict(columns);
    }

    /** {@link #upsert}, the rows as one array a column: a statement for any number of calls. */
    private static String unnestUpsert(List<String> columns) {
        List<String> selected = columns.stream().map(c -> TIMES.contains(c) ? "cast(" + c + " as timestamptz)" : c)
                .toList();
        List<String> arrays = columns.stream()
                .map(c -> "cast(? as " + (NUMBERS.contains(c) ? "bigint" : "text") + "[])").toList();
        return "insert into weave_calls (" + String.join(", ", columns) + ") select " + String.join(", ", selected)
                + " from unnest(" + String.join(", ", arrays) + ") as r(" + String.join(", ", columns) + ")"
                + onConflict(columns);
    }

    private static String onConflict(List<String> columns) {
        return " on conflict (project_id, id) do update set " + String.join(", ",
                columns.stream().filter(c -> !c.equals("project_id") && !c.equals("id"))
                        .map(c -> c.equals("display_name")
                                ? "display_name = coalesce(weave_calls.display_name, excluded.display_name)"
                                : c + " = excluded." + c)
                        .toList());
    }

    /** Stores ends (each item's own project); an end before its start is kept until the start comes. */
    @Transactional
    public void end(List<CallEndSchema> ends, WeaveObjects.ProjectName only, Object... loc) {
        Map<String, Long> projects = new LinkedHashMap<>();
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < ends.size(); i++) {
            CallEndSchema e = ends.get(i);
            Object[] at = DatasetService.at(loc, i);
            long projectId = project(projects, e.getProjectId(), only, at);
            requireText(e.getId(), DatasetService.at(at, "id"));
            requireTime(e.getEndedAt(), DatasetService.at(at, "ended_at"));
            rows.add(new Object[] { projectId, e.getId(), ts(e.getEndedAt()), e.getException(),
                    json(e.getOutput(), at, "output"), json(e.getSummary(), at, "summary"), e.getWbRunStepEnd() });
        }
        batch(END_UPSERT, rows);
    }

    /**
     * Stores whole calls of one project (the SDK's default batch path, up to 1,000 calls a request) in one statement:
     * the columns as arrays, a row per call. A call sent twice in one batch is one row, as its upserts one after the
     * other would leave it: the later values, the first display name.
     */
    @Transactional
    public void complete(List<CompletedCallSchema> calls, WeaveObjects.ProjectName only) {
        Map<String, Long> projects = new LinkedHashMap<>();
        Map<String, Object[]> rows = new LinkedHashMap<>();
        for (int i = 0; i < calls.size(); i++) {
            CompletedCallSchema c = calls.get(i);
            Object[] at = new Object[] { "body", "batch", i };
            long projectId = project(projects, c.getProjectId(), only, at);
            requireText(c.getId(), DatasetService.at(at, "id"));
            requireText(c.getTraceId(), DatasetService.at(at, "trace_id"));
            requireText(c.getOpName(), DatasetService.at(at, "op_name"));
            requireTime(c.getStartedAt(), DatasetService.at(at, "started_at"));
            requireTime(c.getEndedAt(), DatasetService.at(at, "ended_at"));
            Object[] row = new Object[] { projectId, c.getId(), c.getTraceId(), c.getParentId(), c.getOpName(),
                    c.getDisplayName(), c.getThreadId(), c.getTurnId(), instant(c.getStartedAt()),
                    instant(c.getEndedAt()), c.getException(), json(c.getAttributes(), at, "attributes"),
                    json(c.getInputs(), at, "inputs"), json(c.getOutput(), at, "output"),
                    json(c.getSummary(), at, "summary"), access.caller().username(), c.getWbRunId(), c.getWbRunStep(),
                    c.getWbRunStepEnd() };
            Object[] earlier = rows.put(projectId + "/" + c.getId(), row);
            if (earlier != null && earlier[DISPLAY_NAME] != null) {
                row[DISPLAY_NAME] = earlier[DISPLAY_NAME];
            }
        }
        if (rows.isEmpty()) {
            return;
        }
        work(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(COMPLETE_UPSERT)) {
                List<Object[]> all = new ArrayList<>(rows.values());
                for (int column = 0; column < COMPLETE.size(); column++) {
                    boolean numbers = NUMBERS.contains(COMPLETE.get(column));
                    Object[] values = numbers ? new Long[all.size()] : new String[all.size()];
                    for (int i = 0; i < all.size(); i++) {
                        values[i] = all.get(i)[column];
                    }
                    statement.setArray(column + 1, connection.createArrayOf(numbers ? "bigint" : "text", values));
                }
                statement.executeUpdate();
            }
            return null;
        });
    }

    /** Deletes the calls and their descendants; answers how many. */
    @Transactional
    public int delete(WeaveObjects.ProjectName name, List<String> ids) {
        ProjectRef ref = access.project(name.entity(), name.project(), dev.fulcrum.accounts.Role.MEMBER);
        return work(connection -> {
            try (PreparedStatement statement = connection.prepareStatement("""
                    with recursive doomed(id) as (
                        select id from weave_calls where project_id = ? and id = any(?) and deleted_at is null
                        union
                        select c.id from weave_calls c join doomed d on c.parent_id = d.id
                        where c.project_id = ? and c.deleted_at is null)
                    update weave_calls set deleted_at = now()
                    where project_id = ? and id in (select id from doomed)""")) {
                statement.setLong(1, ref.projectId());
                statement.setArray(2, connection.createArrayOf("text", ids.toArray()));
                statement.setLong(3, ref.projectId());
                statement.setLong(4, ref.projectId());
                return statement.executeUpdate();
            }
        });
    }

    /** Renames a call; 404 when the project has no such call. */
    @Transactional
    public void rename(WeaveObjects.ProjectName name, String id, String displayName) {
        ProjectRef ref = access.project(name.entity(), name.project(), dev.fulcrum.accounts.Role.MEMBER);
        int updated = work(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(
                    "update weave_calls set display_name = ? where project_id = ? and id = ? and deleted_at is null")) {
                statement.setString(1, displayName);
                statement.setLong(2, ref.projectId());
                statement.setString(3, id);
                return statement.executeUpdate();
            }
        });
        if (updated == 0) {
            throw ApiException.notFound("Call " + id + " not found");
        }
    }

    // ---- reads

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
        List<Object> params = new ArrayList<>();
        String calls = SELECT + " where " + READER + " and " + where("a.project_id", params, null) + " and c.id = ?";
        params.add(id);
        return readOnly(name, new Statement(calls, params), null, (results, out) -> {
            out.writeStartObject();
            out.writeFieldName("call");
            if (results.getString(CALL + 1) != null) {
                write(results, name.id(), ALL, out);
            } else {
                out.writeNull();
            }
            out.writeEndObject();
        });
    }

    /** The calls a query selects, in its order, as JSON Lines: one call (its {@code columns}) per line. */
    public byte[] query(WeaveObjects.ProjectName name, Query query, Set<String> columns) {
        Statement page = null;
        ApiException invalid = null;
        try {
            page = page(query);
        } catch (ApiException e) {
            invalid = e; // answered once the caller's access is known, as a 403 or 404 comes first
        }
        return readOnly(name, page, invalid, (results, out) -> {
            // one generator for the whole page: each call a root value ending in its own newline, with no
            // separator of Jackson's between them
            out.setRootValueSeparator(null);
            if (results.getString(CALL + 1) != null) {
                do {
                    write(results, name.id(), columns, out);
                    out.writeRaw('\n');
                } while (results.next());
            }
        });
    }

    /** A statement and its parameters, in order. */
    private record Statement(String sql, List<Object> params) {
    }

    /** Writes what a statement selected, from its first row on (a row without a call when none was selected). */
    private interface Answer {
        void write(ResultSet results, JsonGenerator out) throws SQLException, IOException;
    }

    /**
     * The caller's access and the calls {@code calls} selects, in one statement; answers what {@code answer} wrote,
     * once the caller may read the project (403 or 404 otherwise, and before {@code invalid}, a refusal of the request
     * that left no statement to run). The answer is written whole before it is sent, so that the connection goes back
     * to the pool at once however slowly the client reads, and a failure is still an error in the interface's shape.
     */
    private byte[] readOnly(WeaveObjects.ProjectName name, Statement calls, ApiException invalid, Answer answer) {
        Caller caller = access.caller();
        List<Object> params = new ArrayList<>(List.of(caller.userId(), name.project(), name.entity()));
        String sql = READABLE;
        if (invalid == null) {
            sql = "select a.*, c.* from (" + READABLE + ") a left join lateral (" + calls.sql() + ") c on true";
            params.add(caller.admin()); // READER's
            params.addAll(calls.params());
        }
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, params);
            try (ResultSet results = statement.executeQuery()) {
                if (!results.next()) {
                    throw ApiException.notFound("Entity " + name.entity() + " not found");
                }
                Long projectId = (Long) results.getObject(3);
                access.authorize(name.entity(), name.project(), results.getLong(1), projectId, results.getString(2),
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
            }
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        } catch (IOException e) {
            throw new UncheckedIOException("Calls could not be written as JSON", e);
        }
    }

    /**
     * A page's statement, the project being {@code a.project_id}: the filters, the order (the sort fields, then id),
     * the limit and the offset.
     */
    private Statement page(Query query) {
        List<Object> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder(SELECT).append(" where ").append(READER).append(" and ")
                .append(where("a.project_id", params, query)).append(" order by ");
        List<SortBy> sortBy = query.sortBy() == null ? List.of() : query.sortBy();
        for (int i = 0; i < sortBy.size(); i++) {
            SortBy sort = sortBy.get(i);
            String column = SORTABLE.get(sort.getField());
            if (column == null) {
                throw ApiException.invalid(Violation.of(
                        "Sortable fields: " + String.join(", ", new java.util.TreeSet<>(SORTABLE.keySet())),
                        "value_error", "body", "sort_by", i, "field"));
            }
            boolean desc = sort.getDirection() == SortBy.DirectionEnum.DESC;
            sql.append(column).append(desc ? " desc nulls last, " : " asc nulls first, ");
        }
        sql.append(sortBy.isEmpty() ? "c.started_at asc nulls first, c.id asc" : "c.id asc");
        int limit = query.limit() == null ? MAX_PAGE : query.limit();
        if (limit > MAX_PAGE) {
            throw ApiException.invalid(
                    Violation.of("At most " + MAX_PAGE + " calls per query", "less_than_equal", "body", "limit"));
        }
        sql.append(" limit ? offset ?");
        params.add(limit);
        params.add(query.offset() == null ? 0 : query.offset());
        return new Statement(sql.toString(), params);
    }

    /** How many calls a query selects. */
    @Transactional
    public long count(WeaveObjects.ProjectName name, Query query) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<Object> params = new ArrayList<>(List.of(ref.projectId()));
        String where = where("?", params, query);
        String sql = query.limit() == null ? "select count(*) from weave_calls c where " + where
                : "select count(*) from (select 1 from weave_calls c where " + where + " limit ?) l";
        if (query.limit() != null) {
            params.add(query.limit());
        }
        return work(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                bind(statement, params);
                try (ResultSet results = statement.executeQuery()) {
                    results.next();
                    return results.getLong(1);
                }
            }
        });
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

    /** The conditions of a query (none when null) on the calls of {@code project}, their parameters added. */
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
                where.append(" and (c.op_name = any(?) or c.op_name like any(?))");
                params.add(exact.toArray(String[]::new));
                params.add(prefixes.toArray(String[]::new));
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
            CallExpressions.Sql expr = CallExpressions.compile(query.expr(), FIELDS, "body", "query", "$expr");
            where.append(" and (").append(expr.condition()).append(")");
            params.addAll(expr.params());
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
            where.append(" and exists (select 1 from unnest(?::text[]) r(ref) where jsonb_path_exists(").append(column)
                    .append("::jsonb, 'strict $.** ? (@ == $ref)', jsonb_build_object('ref', r.ref)))");
            params.add(refs.toArray(String[]::new));
        }
    }

    private static void any(StringBuilder where, List<Object> params, String column, List<String> values) {
        if (values != null && !values.isEmpty()) {
            where.append(" and ").append(column).append(" = any(?)");
            params.add(values.toArray(String[]::new));
        }
    }

    /**
     * One call of {@link #SELECT}'s columns (from {@link #CALL} on), the {@code columns} asked for; stored JSON goes
     * out as it is. {@code summary.weave} gets the status, trace name and latency the hosted server derives, as Weave's
     * readers (the SDK, the UI) expect them there.
     */
    private void write(ResultSet r, String projectId, Set<String> columns, JsonGenerator out)
            throws SQLException, IOException {
        String opName = r.getString(CALL + 2);
        String displayName = r.getString(CALL + 3);
        OffsetDateTime startedAt = r.getObject(CALL + 8, OffsetDateTime.class);
        OffsetDateTime endedAt = r.getObject(CALL + 9, OffsetDateTime.class);
        String exception = r.getString(CALL + 10);
        out.writeStartObject();
        out.writeStringField("id", r.getString(CALL + 1));
        out.writeStringField("project_id", projectId);
        out.writeStringField("op_name", opName);
        if (columns.contains("display_name")) {
            out.writeStringField("display_name", displayName);
        }
        out.writeStringField("trace_id", r.getString(CALL + 4));
        text(out, columns, "parent_id", r, CALL + 5);
        text(out, columns, "thread_id", r, CALL + 6);
        text(out, columns, "turn_id", r, CALL + 7);
        time(out, "started_at", startedAt);
        if (columns.contains("ended_at")) {
            time(out, "ended_at", endedAt);
        }
        if (columns.contains("exception")) {
            out.writeStringField("exception", exception);
        }
        raw(out, columns, "attributes", r.getString(CALL + 11), "{}");
        raw(out, columns, "inputs", r.getString(CALL + 12), "{}");
        raw(out, columns, "output", r.getString(CALL + 13), "null");
        if (columns.contains("summary")) {
            out.writeFieldName("summary");
            summary(out, r.getString(CALL + 14), opName, displayName, startedAt, endedAt, exception);
        }
        text(out, columns, "wb_user_id", r, CALL + 15);
        text(out, columns, "wb_run_id", r, CALL + 16);
        number(out, columns, "wb_run_step", r, CALL + 17);
        number(out, columns, "wb_run_step_end", r, CALL + 18);
        if (columns.contains("deleted_at")) {
            time(out, "deleted_at", r.getObject(CALL + 19, OffsetDateTime.class));
        }
        out.writeEndObject();
    }

    /**
     * The stored summary with {@code weave} added. An object without a {@code "weave"} anywhere in its text (what the
     * SDKs send) is written as stored, the derived object spliced in before its closing brace; anything else is merged
     * as a tree (a stored {@code weave} object keeps its other keys, a stored non-object is replaced).
     */
    private void summary(JsonGenerator out, String stored, String opName, String displayName, OffsetDateTime startedAt,
            OffsetDateTime endedAt, String exception) throws IOException {
        String status = exception != null ? "error" : endedAt == null ? "running" : "success";
        String traceName = displayName != null ? displayName : opShortName(opName);
        Long latency = endedAt != null && startedAt != null ? Duration.between(startedAt, endedAt).toMillis() : null;
        int close = stored == null ? -1 : stored.stripTrailing().length() - 1;
        String open = stored == null ? "" : stored.stripLeading();
        if (stored == null || (close >= 0 && stored.charAt(close) == '}' && open.startsWith("{")
                && !stored.contains("\"weave\""))) {
            StringBuilder text = new StringBuilder(stored == null ? 64 : stored.length() + 64);
            if (stored == null || stored.substring(stored.indexOf('{') + 1, close).isBlank()) {
                text.append('{');
            } else {
                text.append(stored, 0, close).append(',');
            }
            text.append("\"weave\":{\"status\":\"").append(status).append("\",\"trace_name\":");
            if (traceName == null) {
                text.append("null");
            } else {
                text.append('"').append(JsonStringEncoder.getInstance().quoteAsString(traceName)).append('"');
            }
            if (latency != null) {
                text.append(",\"latency_ms\":").append(latency);
            }
            out.writeRawValue(text.append("}}").toString());
            return;
        }
        JsonNode tree = json.readTree(stored);
        ObjectNode summary = tree != null && tree.isObject() ? (ObjectNode) tree : json.createObjectNode();
        ObjectNode weave = summary.has("weave") && summary.get("weave").isObject() ? (ObjectNode) summary.get("weave")
                : summary.putObject("weave");
        weave.put("status", status);
        weave.put("trace_name", traceName);
        if (latency != null) {
            weave.put("latency_ms", latency);
        }
        out.writeTree(summary);
    }

    /** {@code weave:///e/p/op/name:digest} is {@code name}; a plain name is itself. */
    static String opShortName(String opName) {
        if (opName == null) {
            return null;
        }
        int slash = opName.lastIndexOf('/');
        String tail = slash >= 0 ? opName.substring(slash + 1) : opName;
        int colon = opName.startsWith("weave:") ? tail.lastIndexOf(':') : -1;
        return colon > 0 ? tail.substring(0, colon) : tail;
    }

    private static void text(JsonGenerator out, Set<String> columns, String field, ResultSet r, int column)
            throws SQLException, IOException {
        if (columns.contains(field)) {
            out.writeStringField(field, r.getString(column));
        }
    }

    private static void number(JsonGenerator out, Set<String> columns, String field, ResultSet r, int column)
            throws SQLException, IOException {
        if (columns.contains(field)) {
            long value = r.getLong(column);
            out.writeFieldName(field);
            if (r.wasNull()) {
                out.writeNull();
            } else {
                out.writeNumber(value);
            }
        }
    }

    private static void raw(JsonGenerator out, Set<String> columns, String field, String value, String absent)
            throws IOException {
        if (columns.contains(field)) {
            out.writeFieldName(field);
            out.writeRawValue(value == null ? absent : value);
        }
    }

    private static void time(JsonGenerator out, String field, OffsetDateTime value) throws IOException {
        out.writeStringField(field, value == null ? null : value.toInstant().toString());
    }

    // ---- helpers

    private long project(Map<String, Long> projects, String projectId, WeaveObjects.ProjectName only, Object[] at) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(projectId, DatasetService.at(at, "project_id"));
        if (only != null && !only.equals(name)) {
            throw ApiException.invalid(Violation.of("Must be the path's project " + only.id(), "value_error",
                    DatasetService.at(at, "project_id")));
        }
        return projects.computeIfAbsent(name.id(),
                key -> access.writableProject(name.entity(), name.project()).projectId());
    }

    private static void requireText(String value, Object[] loc) {
        if (value == null || value.isEmpty()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", loc));
        }
    }

    private static void requireTime(OffsetDateTime value, Object[] loc) {
        if (value == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", loc));
        }
    }

    /** A time as the text PostgreSQL reads back as the same instant ({@code 2026-01-01T00:00:00.123Z}). */
    private static String instant(OffsetDateTime time) {
        return time == null ? null : time.toInstant().toString();
    }

    private static Timestamp ts(OffsetDateTime time) {
        return time == null ? null : Timestamp.from(time.toInstant());
    }

    private static String json(JsonNode value, Object[] at, String field) {
        if (value == null || value.isMissingNode()) {
            return null;
        }
        DatasetService.requireFinite(value, DatasetService.at(at, field));
        return CanonicalJson.writeInOrder(value);
    }

    private void batch(String sql, List<Object[]> rows) {
        if (rows.isEmpty()) {
            return;
        }
        work(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                for (Object[] row : rows) {
                    bind(statement, java.util.Arrays.asList(row));
                    statement.addBatch();
                }
                statement.executeBatch();
            }
            return null;
        });
    }

    private static void bind(PreparedStatement statement, List<Object> params) throws SQLException {
        for (int i = 0; i < params.size(); i++) {
            Object param = params.get(i);
            if (param == null) {
                statement.setNull(i + 1, Types.NULL);
            } else if (param instanceof String[] values) {
                statement.setArray(i + 1, statement.getConnection().createArrayOf("text", values));
            } else {
                statement.setObject(i + 1, param);
            }
        }
    }

    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private <T> T work(Work<T> work) {
        return em.unwrap(Session.class).doReturningWork(work::run);
    }
}

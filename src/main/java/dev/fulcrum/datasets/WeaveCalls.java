package dev.fulcrum.datasets;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
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

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
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

    private static final String SELECT = """
            select c.id, c.op_name, c.display_name, c.trace_id, c.parent_id, c.thread_id, c.turn_id, c.started_at,
                   c.ended_at, c.exception, c.attributes, c.inputs, c.output, c.summary, c.wb_user_id, c.wb_run_id,
                   c.wb_run_step, c.wb_run_step_end, c.deleted_at
            from weave_calls c""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    /** A call as stored; JSON values are JSON text (null when absent). */
    public record Call(String id, String projectId, String opName, String displayName, String traceId, String parentId,
            String threadId, String turnId, OffsetDateTime startedAt, OffsetDateTime endedAt, String exception,
            String attributes, String inputs, String output, String summary, String wbUserId, String wbRunId,
            Long wbRunStep, Long wbRunStepEnd, OffsetDateTime deletedAt) {
    }

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
        batch("""
                insert into weave_calls (project_id, id, trace_id, parent_id, op_name, display_name, thread_id,
                    turn_id, started_at, attributes, inputs, wb_user_id, wb_run_id, wb_run_step)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                on conflict (project_id, id) do update set trace_id = excluded.trace_id,
                    parent_id = excluded.parent_id, op_name = excluded.op_name,
                    display_name = coalesce(weave_calls.display_name, excluded.display_name),
                    thread_id = excluded.thread_id, turn_id = excluded.turn_id, started_at = excluded.started_at,
                    attributes = excluded.attributes, inputs = excluded.inputs, wb_user_id = excluded.wb_user_id,
                    wb_run_id = excluded.wb_run_id, wb_run_step = excluded.wb_run_step""", rows);
        return started;
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
        batch("""
                insert into weave_calls (project_id, id, ended_at, exception, output, summary, wb_run_step_end)
                values (?, ?, ?, ?, ?, ?, ?)
                on conflict (project_id, id) do update set ended_at = excluded.ended_at,
                    exception = excluded.exception, output = excluded.output, summary = excluded.summary,
                    wb_run_step_end = excluded.wb_run_step_end""", rows);
    }

    /** Stores whole calls of one project (the SDK's default batch path). */
    @Transactional
    public void complete(List<CompletedCallSchema> calls, WeaveObjects.ProjectName only) {
        Map<String, Long> projects = new LinkedHashMap<>();
        List<Object[]> rows = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            CompletedCallSchema c = calls.get(i);
            Object[] at = new Object[] { "body", "batch", i };
            long projectId = project(projects, c.getProjectId(), only, at);
            requireText(c.getId(), DatasetService.at(at, "id"));
            requireText(c.getTraceId(), DatasetService.at(at, "trace_id"));
            requireText(c.getOpName(), DatasetService.at(at, "op_name"));
            requireTime(c.getStartedAt(), DatasetService.at(at, "started_at"));
            requireTime(c.getEndedAt(), DatasetService.at(at, "ended_at"));
            rows.add(new Object[] { projectId, c.getId(), c.getTraceId(), c.getParentId(), c.getOpName(),
                    c.getDisplayName(), c.getThreadId(), c.getTurnId(), ts(c.getStartedAt()), ts(c.getEndedAt()),
                    c.getException(), json(c.getAttributes(), at, "attributes"), json(c.getInputs(), at, "inputs"),
                    json(c.getOutput(), at, "output"), json(c.getSummary(), at, "summary"), access.caller().username(),
                    c.getWbRunId(), c.getWbRunStep(), c.getWbRunStepEnd() });
        }
        batch("""
                insert into weave_calls (project_id, id, trace_id, parent_id, op_name, display_name, thread_id,
                    turn_id, started_at, ended_at, exception, attributes, inputs, output, summary, wb_user_id,
                    wb_run_id, wb_run_step, wb_run_step_end)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                on conflict (project_id, id) do update set trace_id = excluded.trace_id,
                    parent_id = excluded.parent_id, op_name = excluded.op_name,
                    display_name = coalesce(weave_calls.display_name, excluded.display_name),
                    thread_id = excluded.thread_id, turn_id = excluded.turn_id, started_at = excluded.started_at,
                    ended_at = excluded.ended_at, exception = excluded.exception, attributes = excluded.attributes,
                    inputs = excluded.inputs, output = excluded.output, summary = excluded.summary,
                    wb_user_id = excluded.wb_user_id, wb_run_id = excluded.wb_run_id,
                    wb_run_step = excluded.wb_run_step, wb_run_step_end = excluded.wb_run_step_end""", rows);
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

    /** One call, or null. */
    @Transactional
    public Call read(WeaveObjects.ProjectName name, String id) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<Call> found = work(connection -> select(connection, name,
                SELECT + " where c.project_id = ? and c.id = ? and c.deleted_at is null",
                List.of(ref.projectId(), id)));
        return found.isEmpty() ? null : found.get(0);
    }

    /** The calls a query selects, in its order. */
    @Transactional
    public List<Call> query(WeaveObjects.ProjectName name, Query query) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<Object> params = new ArrayList<>();
        String where = where(ref.projectId(), name, query, params);
        StringBuilder sql = new StringBuilder(SELECT).append(" where ").append(where).append(" order by ");
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
        return work(connection -> select(connection, name, sql.toString(), params));
    }

    /** How many calls a query selects. */
    @Transactional
    public long count(WeaveObjects.ProjectName name, Query query) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<Object> params = new ArrayList<>();
        String where = where(ref.projectId(), name, query, params);
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
            return Set.copyOf(COLUMNS);
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

    private String where(long projectId, WeaveObjects.ProjectName name, Query query, List<Object> params) {
        StringBuilder where = new StringBuilder("c.project_id = ? and c.deleted_at is null");
        params.add(projectId);
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

    private List<Call> select(Connection connection, WeaveObjects.ProjectName name, String sql, List<Object> params)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, params);
            List<Call> calls = new ArrayList<>();
            try (ResultSet r = statement.executeQuery()) {
                while (r.next()) {
                    calls.add(new Call(r.getString(1), name.id(), r.getString(2), r.getString(3), r.getString(4),
                            r.getString(5), r.getString(6), r.getString(7), time(r, 8), time(r, 9), r.getString(10),
                            r.getString(11), r.getString(12), r.getString(13), r.getString(14), r.getString(15),
                            r.getString(16), (Long) r.getObject(17), (Long) r.getObject(18), time(r, 19)));
                }
            }
            return calls;
        }
    }

    private static OffsetDateTime time(ResultSet r, int column) throws SQLException {
        Timestamp value = r.getTimestamp(column);
        return value == null ? null : value.toInstant().atOffset(ZoneOffset.UTC);
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

package dev.fulcrum.traces;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.datasets.DatasetService;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.model.CallEndSchema;
import dev.fulcrum.datasets.api.model.CallStartSchema;
import dev.fulcrum.datasets.api.model.CompletedCallSchema;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.CanonicalJson;

/**
 * Writes of Weave's calls in {@code weave_calls}: starts, ends and whole calls are upserts by (project, id), so that an
 * end may arrive before its start and a retried batch changes nothing; deletes and renames. JSON values are stored as
 * the text that was sent, keys in their order.
 */
@ApplicationScoped
public class CallWrites {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    jakarta.enterprise.event.Event<ScoresRecorded> scores;

    public record Started(String id, String traceId) {
    }

    /** Stores starts (each item's own project, every one writable by the caller); answers their ids. */
    @Transactional
    public List<Started> start(List<CallStartSchema> starts, WeaveObjects.ProjectName only, Object... loc) {
        List<Started> started = new ArrayList<>(starts.size());
        Map<String, Long> projects = new LinkedHashMap<>();
        Map<String, List<String>> ids = new LinkedHashMap<>();
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
            rows.add(row(START, projectId, id, traceId, s.getParentId(), s.getOpName(), s.getDisplayName(),
                    s.getThreadId(), s.getTurnId(), s.getStartedAt(), json(s.getAttributes(), at, "attributes"),
                    json(s.getInputs(), at, "inputs"), access.caller().username(), s.getWbRunId(), s.getWbRunStep()));
            started.add(new Started(id, traceId));
            ids.computeIfAbsent(WeaveObjects.projectName(s.getProjectId(), at).id(), key -> new ArrayList<>()).add(id);
        }
        NativeSql.batch(em, START_UPSERT, rows);
        // an end may have come first: such a call has ended now that its op is known
        ids.forEach((project, called) -> scores
                .fire(new ScoresRecorded(projects.get(project), project, called, List.of())));
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
        List<String> values = IntStream.rangeClosed(1, columns.size()).mapToObj(i -> "?" + i).toList();
        return "insert into weave_calls (" + String.join(", ", columns) + ") values (" + String.join(", ", values) + ")"
                + onConflict(columns);
    }

    /** {@link #upsert}, the rows as one array a column: a statement for any number of calls. */
    private static String unnestUpsert(List<String> columns) {
        List<String> selected = columns.stream().map(c -> TIMES.contains(c) ? "cast(" + c + " as timestamptz)" : c)
                .toList();
        List<String> arrays = IntStream.range(0, columns.size()).mapToObj(
                i -> "cast(?" + (i + 1) + " as " + (NUMBERS.contains(columns.get(i)) ? "bigint" : "text") + "[])")
                .toList();
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
        Map<String, List<String>> ended = new LinkedHashMap<>();
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < ends.size(); i++) {
            CallEndSchema e = ends.get(i);
            Object[] at = DatasetService.at(loc, i);
            long projectId = project(projects, e.getProjectId(), only, at);
            requireText(e.getId(), DatasetService.at(at, "id"));
            requireTime(e.getEndedAt(), DatasetService.at(at, "ended_at"));
            rows.add(row(END, projectId, e.getId(), e.getEndedAt(), e.getException(), json(e.getOutput(), at, "output"),
                    json(e.getSummary(), at, "summary"), e.getWbRunStepEnd()));
            ended.computeIfAbsent(WeaveObjects.projectName(e.getProjectId(), at).id(), key -> new ArrayList<>())
                    .add(e.getId());
        }
        NativeSql.batch(em, END_UPSERT, rows);
        ended.forEach(
                (project, ids) -> scores.fire(new ScoresRecorded(projects.get(project), project, ids, List.of())));
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
        Map<String, List<String>> ended = new LinkedHashMap<>();
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
            ended.computeIfAbsent(WeaveObjects.projectName(c.getProjectId(), at).id(), key -> new ArrayList<>())
                    .add(c.getId());
            Object[] earlier = rows.put(projectId + "/" + c.getId(), row);
            if (earlier != null && earlier[DISPLAY_NAME] != null) {
                row[DISPLAY_NAME] = earlier[DISPLAY_NAME];
            }
        }
        if (rows.isEmpty()) {
            return;
        }
        List<Object[]> all = new ArrayList<>(rows.values());
        Object[] arrays = new Object[COMPLETE.size()];
        for (int column = 0; column < COMPLETE.size(); column++) {
            Object[] values = NUMBERS.contains(COMPLETE.get(column)) ? new Long[all.size()] : new String[all.size()];
            for (int i = 0; i < all.size(); i++) {
                values[i] = all.get(i)[column];
            }
            arrays[column] = values;
        }
        NativeSql.update(em, COMPLETE_UPSERT, arrays);
        ended.forEach(
                (project, ids) -> scores.fire(new ScoresRecorded(projects.get(project), project, ids, List.of())));
    }

    /** Deletes the calls and their descendants; answers how many. */
    @Transactional
    public int delete(WeaveObjects.ProjectName name, List<String> ids) {
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        return NativeSql.update(em, """
                with recursive doomed(id) as (
                    select id from weave_calls where project_id = ?1 and id = any(?2) and deleted_at is null
                    union
                    select c.id from weave_calls c join doomed d on c.parent_id = d.id
                    where c.project_id = ?1 and c.deleted_at is null)
                update weave_calls set deleted_at = now()
                where project_id = ?1 and id in (select id from doomed)""", ref.projectId(),
                ids.toArray(String[]::new));
    }

    /** Renames a call; 404 when the project has no such call. */
    @Transactional
    public void rename(WeaveObjects.ProjectName name, String id, String displayName) {
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        int updated = NativeSql.update(em,
                "update weave_calls set display_name = ?1 where project_id = ?2 and id = ?3 and deleted_at is null",
                NativeSql.typed(displayName, String.class), ref.projectId(), id);
        if (updated == 0) {
            throw ApiException.notFound("Call " + id + " not found");
        }
    }

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

    /** The values of a row of {@code columns}, a null given with its column's type. */
    private static Object[] row(List<String> columns, Object... values) {
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                String column = columns.get(i);
                values[i] = NUMBERS.contains(column) ? NativeSql.typed(null, Long.class)
                        : TIMES.contains(column) ? NativeSql.typed(null, OffsetDateTime.class)
                                : NativeSql.typed(null, String.class);
            }
        }
        return values;
    }

    private static String json(JsonNode value, Object[] at, String field) {
        if (value == null || value.isMissingNode()) {
            return null;
        }
        DatasetService.requireFinite(value, DatasetService.at(at, field));
        return CanonicalJson.writeInOrder(value);
    }
}

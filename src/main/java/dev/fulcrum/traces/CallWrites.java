package dev.fulcrum.traces;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

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
 * the text that was sent, keys in their order. The statements are {@link CallStatements}'.
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
        CallStatements.start(em, rows);
        // an end may have come first: such a call has ended now that its op is known
        ids.forEach((project, called) -> scores
                .fire(new ScoresRecorded(projects.get(project), project, called, List.of())));
        return started;
    }

    private static final List<String> START = CallStatements.START;
    private static final List<String> END = CallStatements.END;
    private static final int DISPLAY_NAME = CallStatements.COMPLETE.indexOf("display_name");

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
        CallStatements.end(em, rows);
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
        CallStatements.complete(em, new ArrayList<>(rows.values()));
        ended.forEach(
                (project, ids) -> scores.fire(new ScoresRecorded(projects.get(project), project, ids, List.of())));
    }

    /** Deletes the calls and their descendants; answers how many. */
    @Transactional
    public int delete(WeaveObjects.ProjectName name, List<String> ids) {
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        return CallStatements.delete(em, ref.projectId(), ids);
    }

    /** Renames a call; 404 when the project has no such call. */
    @Transactional
    public void rename(WeaveObjects.ProjectName name, String id, String displayName) {
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        int updated = CallStatements.rename(em, ref.projectId(), id, displayName);
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
                values[i] = CallStatements.NUMBERS.contains(column) ? NativeSql.typed(null, Long.class)
                        : CallStatements.TIMES.contains(column) ? NativeSql.typed(null, OffsetDateTime.class)
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

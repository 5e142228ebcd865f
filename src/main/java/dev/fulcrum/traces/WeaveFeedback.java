package dev.fulcrum.traces;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
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
import dev.fulcrum.datasets.api.model.FeedbackCreateReq;
import dev.fulcrum.datasets.api.model.FeedbackSortBy;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Weave's feedback in {@code weave_feedback}: added by members on a call or object of their project, read by viewers
 * (its statements are {@link FeedbackStatements}').
 */
@ApplicationScoped
public class WeaveFeedback {

    static final List<String> FIELDS = List.of("id", "project_id", "weave_ref", "feedback_type", "payload", "creator",
            "annotation_ref", "runnable_ref", "call_ref", "trigger_ref", "wb_user_id", "created_at");

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    com.fasterxml.jackson.databind.ObjectMapper json;

    @Inject
    jakarta.enterprise.event.Event<ScoresRecorded> scores;

    public record Created(String id, OffsetDateTime createdAt, String wbUserId, JsonNode payload) {
    }

    /** Stores each item in its own project (every one writable by the caller), in one transaction. */
    @Transactional
    public List<Created> create(List<FeedbackCreateReq> items, Object... loc) {
        Map<String, Long> projects = new LinkedHashMap<>();
        List<Created> created = new ArrayList<>(items.size());
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        String user = access.caller().username();
        Map<String, java.util.Set<String>> types = new LinkedHashMap<>();
        for (int i = 0; i < items.size(); i++) {
            FeedbackCreateReq f = items.get(i);
            Object[] at = loc.length == 0 ? new Object[] { "body" } : DatasetService.at(loc, i);
            WeaveObjects.ProjectName name = WeaveObjects.projectName(f.getProjectId(),
                    DatasetService.at(at, "project_id"));
            String prefix = "weave:///" + name.id() + "/";
            if (f.getWeaveRef() == null || !f.getWeaveRef().startsWith(prefix)) {
                throw ApiException.invalid(Violation.of("Must be a reference '" + prefix + "...' of the same project",
                        "value_error", DatasetService.at(at, "weave_ref")));
            }
            if (f.getFeedbackType() == null || f.getFeedbackType().isEmpty()) {
                throw ApiException
                        .invalid(Violation.of("Field required", "missing", DatasetService.at(at, "feedback_type")));
            }
            if (f.getPayload() == null || !f.getPayload().isObject()) {
                throw ApiException.invalid(Violation.of("Input should be a valid dictionary", "dict_type",
                        DatasetService.at(at, "payload")));
            }
            DatasetService.requireFinite(f.getPayload(), DatasetService.at(at, "payload"));
            long projectId = projects.computeIfAbsent(name.id(),
                    key -> access.writableProject(name.entity(), name.project()).projectId());
            String id = f.getId() == null || f.getId().isEmpty() ? UUID.randomUUID().toString() : f.getId();
            FeedbackStatements.insert(em, projectId, id, f, user, now);
            // 0 when the id is stored already: a retried batch, which changes nothing
            created.add(new Created(id, now, user, f.getPayload()));
            types.computeIfAbsent(name.id(), key -> new java.util.LinkedHashSet<>()).add(f.getFeedbackType());
        }
        types.forEach((project, added) -> scores
                .fire(new ScoresRecorded(projects.get(project), project, List.of(), List.copyOf(added))));
        return created;
    }

    /** The project's feedback matched by {@code expr}, as maps of the requested fields. */
    @Transactional
    public List<Map<String, Object>> query(WeaveObjects.ProjectName name, List<String> fields, JsonNode expr,
            List<FeedbackSortBy> sortBy, Integer limit, Integer offset) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        List<String> wanted = fields == null || fields.isEmpty() ? FIELDS : fields;
        return FeedbackStatements.query(em, ref.projectId(), expr, sortBy, limit, offset, r -> {
            Map<String, Object> all = new LinkedHashMap<>();
            all.put("id", r.string(0));
            all.put("project_id", name.id());
            all.put("weave_ref", r.string(1));
            all.put("feedback_type", r.string(2));
            all.put("payload", payload(r.string(3)));
            all.put("creator", r.string(4));
            all.put("annotation_ref", r.string(5));
            all.put("runnable_ref", r.string(6));
            all.put("call_ref", r.string(7));
            all.put("trigger_ref", r.string(8));
            all.put("wb_user_id", r.string(9));
            all.put("created_at", r.time(10).toInstant().toString());
            Map<String, Object> kept = new LinkedHashMap<>();
            for (String field : wanted) {
                if (all.containsKey(field)) {
                    kept.put(field, all.get(field));
                }
            }
            return kept;
        });
    }

    /** Deletes the feedback matched by {@code expr}; answers how many. */
    @Transactional
    public int purge(WeaveObjects.ProjectName name, JsonNode expr) {
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        if (expr == null || expr.isNull() || (expr.isObject() && expr.isEmpty())) {
            throw ApiException.invalid(Violation.of("A purge needs a query", "missing", "body", "query", "$expr"));
        }
        return FeedbackStatements.purge(em, ref.projectId(), expr);
    }

    private JsonNode payload(String text) {
        try {
            return json.readTree(text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}

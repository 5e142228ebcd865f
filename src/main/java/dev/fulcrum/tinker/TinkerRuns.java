package dev.fulcrum.tinker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.Checkpoints;
import dev.fulcrum.training.TrainingModels;

/**
 * The SDK's {@code RestClient} listings: a user's training runs (Tinker models), their saved weights, sessions and
 * sampling clients. Each belongs to the user who made it; another user's is a 404 (its project's members see the saved
 * weights as checkpoints of the Fulcrum training model, through the training API).
 */
@ApplicationScoped
public class TinkerRuns {

    @Inject
    Access access;

    @Inject
    Tinker tinker;

    @Inject
    StoredJson json;

    @Inject
    Checkpoints checkpoints;

    @Inject
    TrainingModels trainingModels;

    /** {@code owned} and {@code accessible} are the same here: no training run is shared with other users. */
    static void scope(String accessScope) {
        if (accessScope != null && !accessScope.equals("owned") && !accessScope.equals("accessible")) {
            throw ApiException.invalid(Violation.of("Must be owned or accessible", "enum", "query", "access_scope"));
        }
    }

    private static ObjectNode cursor(int offset, int limit, long total) {
        return JsonNodeFactory.instance.objectNode().put("offset", offset).put("limit", limit).put("total_count",
                total);
    }

    /** {@code size} is the bytes of its checkpoint's files (left out when unknown). */
    private static ObjectNode checkpoint(TinkerCheckpoint c, Long size) {
        ObjectNode view = JsonNodeFactory.instance.objectNode().put("checkpoint_id", c.kind + "/" + c.name)
                .put("checkpoint_type", c.kind.equals("weights") ? "training" : "sampler")
                .put("time", c.createdAt.toString())
                .put("tinker_path", "tinker://" + c.modelId + "/" + c.kind + "/" + c.name).put("public", false);
        if (size != null) {
            view.put("size_bytes", size);
        }
        if (c.expiresAt != null) {
            view.put("expires_at", c.expiresAt.toString());
        }
        return view;
    }

    /** Saved weights as the SDK lists them, in their order, each with its size: one query for all the sizes. */
    private List<ObjectNode> listed(List<TinkerCheckpoint> saved) {
        if (saved.isEmpty()) {
            return List.of();
        }
        Map<String, String> trainingModels = new HashMap<>();
        TinkerModel.<TinkerModel> list("id in ?1", saved.stream().map(c -> c.modelId).distinct().toList())
                .forEach(m -> trainingModels.put(m.id, m.trainingModelId));
        List<Checkpoints.Step> steps = saved.stream()
                .map(c -> new Checkpoints.Step(trainingModels.get(c.modelId), c.step)).toList();
        Map<Checkpoints.Step, Long> sizes = checkpoints.sizes(steps);
        List<ObjectNode> views = new ArrayList<>();
        for (int i = 0; i < saved.size(); i++) {
            views.add(checkpoint(saved.get(i), sizes.get(steps.get(i))));
        }
        return views;
    }

    /**
     * The models as the SDK lists them, each with its newest saved weights of either kind: one query for all of them.
     */
    private List<ObjectNode> runs(List<TinkerModel> models) {
        Map<String, ObjectNode> runs = new LinkedHashMap<>();
        Map<String, String> projects = new HashMap<>();
        if (!models.isEmpty()) {
            TinkerSession.<TinkerSession> list("id in ?1", models.stream().map(m -> m.sessionId).distinct().toList())
                    .forEach(s -> projects.put(s.id, s.entity + "/" + s.project));
        }
        for (TinkerModel model : models) {
            runs.put(model.id, JsonNodeFactory.instance.objectNode().put("training_run_id", model.id)
                    .put("base_model", model.baseModel).put("model_owner", access.caller().username())
                    .put("is_lora", true).put("corrupted", false)
                    .put("lora_rank", json.readObject(model.lora).path("rank").asInt())
                    .put("last_request_time", model.lastRequestAt.toString()).put("state", model.state)
                    .put("project", projects.get(model.sessionId)).put("fulcrum_model_id", model.trainingModelId));
        }
        if (!runs.isEmpty()) {
            List<TinkerCheckpoint> last = TinkerCheckpoint.list("""
                    from TinkerCheckpoint c where c.modelId in ?1 and not exists (select 1 from TinkerCheckpoint n
                    where n.modelId = c.modelId and n.kind = c.kind
                    and (n.createdAt > c.createdAt or (n.createdAt = c.createdAt and n.step > c.step)))""",
                    runs.keySet());
            List<ObjectNode> views = listed(last);
            for (int i = 0; i < last.size(); i++) {
                runs.get(last.get(i).modelId).set(
                        last.get(i).kind.equals("weights") ? "last_checkpoint" : "last_sampler_checkpoint",
                        views.get(i));
            }
        }
        return List.copyOf(runs.values());
    }

    @Transactional
    public ObjectNode runs(Integer limit, Integer offset, String accessScope) {
        scope(accessScope);
        long user = access.caller().userId();
        int size = QueryParams.limit(limit, 20, 1, 1000);
        int from = QueryParams.offset(offset);
        ObjectNode page = JsonNodeFactory.instance.objectNode();
        page.putArray("training_runs")
                .addAll(runs(TinkerModel.<TinkerModel> find("userId = ?1 order by createdAt desc, id desc", user)
                        .range(from, from + size - 1).list()));
        page.set("cursor", cursor(from, size, TinkerModel.count("userId", user)));
        return page;
    }

    @Transactional
    public ObjectNode run(String id, String accessScope) {
        scope(accessScope);
        return runs(List.of(tinker.model(id))).get(0);
    }

    /** A model's saved weights, oldest first. */
    @Transactional
    public ObjectNode checkpoints(String id) {
        TinkerModel model = tinker.model(id);
        List<TinkerCheckpoint> saved = TinkerCheckpoint.list("modelId = ?1 order by createdAt, step", model.id);
        ObjectNode page = JsonNodeFactory.instance.objectNode();
        page.putArray("checkpoints").addAll(listed(saved));
        page.set("cursor", cursor(0, saved.size(), saved.size()));
        return page;
    }

    /** All the caller's saved weights, newest first. */
    @Transactional
    public ObjectNode userCheckpoints(Integer limit, Integer offset) {
        long user = access.caller().userId();
        int size = QueryParams.limit(limit, 100, 1, 1000);
        int from = QueryParams.offset(offset);
        String where = "modelId in (select m.id from TinkerModel m where m.userId = ?1)";
        ObjectNode page = JsonNodeFactory.instance.objectNode();
        page.putArray("checkpoints").addAll(
                listed(TinkerCheckpoint.<TinkerCheckpoint> find(where + " order by createdAt desc, step desc", user)
                        .range(from, from + size - 1).list()));
        page.set("cursor", cursor(from, size, TinkerCheckpoint.count(where, user)));
        return page;
    }

    /**
     * Deletes saved weights and the Fulcrum checkpoint holding them (the member role on the model's project needed).
     */
    @Transactional
    public void delete(String id, String kind, String name) {
        Tinker.Saved saved = tinker.savedAt(id, kind, name);
        checkpoints.delete(saved.model().trainingModelId, List.of(saved.checkpoint().step));
        saved.checkpoint().delete();
    }

    /**
     * Sets when saved weights expire ({@code ttl_seconds} from now) or, with {@code null}, keeps them until deleted;
     * the member role on the model's project needed, as for deleting them.
     */
    @Transactional
    public void ttl(String id, String kind, String name, ObjectNode body) {
        Tinker.Saved saved = tinker.savedAt(id, kind, name);
        if (body == null || !body.has("ttl_seconds")) {
            throw ApiException.invalid(
                    Violation.of("Field required (null keeps them until deleted)", "missing", "body", "ttl_seconds"));
        }
        Duration ttl = TinkerInput.ttl(body);
        trainingModels.model(saved.model().trainingModelId, Role.MEMBER);
        saved.checkpoint().expiresAt = ttl == null ? null : tinker.now().plus(ttl);
    }

    @Transactional
    public ObjectNode sessions(Integer limit, Integer offset, String accessScope) {
        scope(accessScope);
        int size = QueryParams.limit(limit, 20, 1, 1000);
        int from = QueryParams.offset(offset);
        ObjectNode page = JsonNodeFactory.instance.objectNode();
        ArrayNode ids = page.putArray("sessions");
        TinkerSession.<TinkerSession> find("userId = ?1 order by createdAt desc, id desc", access.caller().userId())
                .range(from, from + size - 1).list().forEach(s -> ids.add(s.id));
        return page;
    }

    @Transactional
    public ObjectNode session(String id, String accessScope) {
        scope(accessScope);
        TinkerSession session = TinkerSession.findById(id);
        if (session == null || session.userId != access.caller().userId()) {
            throw ApiException.notFound("Session " + id + " not found");
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("project", session.entity + "/" + session.project)
                .put("created_at", session.createdAt.toString());
        if (session.endedAt != null) {
            body.put("ended_at", session.endedAt.toString());
        } else {
            body.putNull("ended_at");
        }
        ArrayNode runs = body.putArray("training_run_ids");
        TinkerModel.<TinkerModel> list("sessionId = ?1 order by createdAt, id", id).forEach(m -> runs.add(m.id));
        ArrayNode samplers = body.putArray("sampler_ids");
        TinkerSampler.<TinkerSampler> list("sessionId = ?1 order by createdAt, id", id)
                .forEach(s -> samplers.add(s.id));
        return body;
    }

    @Transactional
    public ObjectNode sampler(String id) {
        TinkerSampler sampler = TinkerSampler.findById(id);
        if (sampler == null || sampler.userId != access.caller().userId()) {
            throw ApiException.notFound("Sampling client " + id + " not found");
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("sampler_id", sampler.id).put("base_model",
                sampler.baseModel);
        if (sampler.modelPath != null) {
            body.put("model_path", sampler.modelPath);
        }
        return body;
    }
}

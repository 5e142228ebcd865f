package dev.fulcrum.tinker;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.BaseModels;
import dev.fulcrum.training.TrainingModels;

/**
 * Sessions, training clients and the futures of their operations, for the caller of the request: a session and
 * everything in it belong to the user who created it (others get 404); its models belong to the session's project,
 * where the user needs the member role.
 */
@ApplicationScoped
public class Tinker {

    /** The name of saved weights. */
    static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_.-]{1,100}");
    /** The kind of an {@code unload_model} future, and its {@code seq_id}: after every operation of the model. */
    static final String UNLOAD = "unload_model";
    static final long UNLOAD_SEQ = Long.MAX_VALUE;

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    TinkerSettings settings;

    @Inject
    StoredJson json;

    @Inject
    BaseModels baseModels;

    @Inject
    TrainingModels trainingModels;

    @Inject
    dev.fulcrum.artifacts.ArtifactVersions versions;

    @Inject
    UsageMeter meter;

    @Inject
    TinkerAdmission admission;

    @Inject
    TinkerWorkers workers;

    record Session(String id, String entity, String project) {
    }

    @Transactional
    public Session createSession(ObjectNode body) {
        var ref = project(TinkerInput.text(body, "project_id", false, 300), "body", "project_id");
        JsonNode sdk = body.get("sdk_version");
        JsonNode tags = body.get("tags");
        TinkerSession session = newSession(ref, sdk != null && sdk.isTextual() ? sdk.asText() : null,
                tags != null && tags.isArray() ? tags : JsonNodeFactory.instance.arrayNode());
        return new Session(session.id, session.entity, session.project);
    }

    /**
     * The project {@code entity/project} or {@code project} (of the caller's entity), the default one when null,
     * created when missing: the caller needs the member role (403). 422 at {@code loc} for another form.
     */
    Access.ProjectRef project(String projectId, Object... loc) {
        String entity = access.caller().username();
        String project = settings.defaultProject();
        if (projectId != null) {
            int slash = projectId.indexOf('/');
            if (slash >= 0) {
                entity = projectId.substring(0, slash);
                project = projectId.substring(slash + 1);
            } else {
                project = projectId;
            }
            if (!dev.fulcrum.accounts.Names.isEntity(entity) || !dev.fulcrum.accounts.Names.isProject(project)) {
                throw ApiException
                        .invalid(Violation.of("Must be a project of yours or entity/project", "value_error", loc));
            }
        }
        return access.writableProject(entity, project);
    }

    /** A new session of the caller's in the project. */
    TinkerSession newSession(Access.ProjectRef ref, String sdkVersion, JsonNode tags) {
        TinkerSession session = new TinkerSession();
        session.id = TinkerIds.random("s", 20);
        session.userId = access.caller().userId();
        session.entity = ref.entity();
        session.project = ref.project();
        session.sdkVersion = sdkVersion;
        session.tags = json.write(tags);
        session.heartbeatAt = now();
        session.persist();
        return session;
    }

    /** The caller's live session; 404 for an unknown one or another user's, 410 once it ended. */
    TinkerSession session(String id) {
        TinkerSession session = TinkerSession.findById(id);
        if (session == null || session.userId != access.caller().userId()) {
            throw ApiException.notFound("Session " + id + " not found");
        }
        if (session.endedAt != null) {
            throw new Gone("Session " + id + " ended (no heartbeat for " + settings.sessionTimeout().toSeconds()
                    + " s): start a new ServiceClient");
        }
        return session;
    }

    @Transactional
    public void heartbeat(String sessionId) {
        TinkerSession session = session(sessionId);
        session.heartbeatAt = now();
    }

    /** The caller's model; 404 for an unknown one or another user's. */
    TinkerModel model(String id) {
        TinkerModel model = TinkerModel.findById(id);
        if (model == null || model.userId != access.caller().userId()) {
            throw ApiException.notFound("Model " + id + " not found");
        }
        return model;
    }

    @Transactional
    public ObjectNode info(String modelId) {
        TinkerModel model = model(modelId);
        ObjectNode lora = json.readObject(model.lora);
        ObjectNode info = JsonNodeFactory.instance.objectNode().put("model_id", model.id);
        info.putObject("model_data").put("model_name", model.baseModel);
        return info.put("is_lora", true).put("lora_rank", lora.path("rank").asInt()).put("model_name", model.baseModel)
                .put("type", "get_info");
    }

    /**
     * {@code create_model}: the model {@code {session}:train:{n}} waiting for a worker, its Fulcrum training model, and
     * the future that ends when a worker holds it; the same {@code model_seq_id} again answers the same future.
     */
    @Transactional
    public String createModel(ObjectNode body, String idempotencyKey) {
        String sessionId = TinkerInput.text(body, "session_id", true, 200);
        long seq = TinkerInput.integer(body, "model_seq_id", 0, 1_000_000);
        String base = TinkerInput.text(body, "base_model", true, 300);
        TinkerSession session = session(sessionId);
        String id = TinkerIds.model(session.id, seq);
        TinkerRequest existing = TinkerRequest.find("modelId = ?1 and seqId = 0", id).firstResult();
        if (existing == null && idempotencyKey != null) {
            existing = TinkerRequest.find("userId = ?1 and idempotencyKey = ?2", session.userId, idempotencyKey)
                    .firstResult();
        }
        if (existing != null) {
            return existing.id;
        }
        if (!baseModels.worker(base) || !baseModels.inCatalog(base)) {
            throw ApiException
                    .invalid(Violation.of(
                            "Not a base model trained by fulcrum-worker here: " + String.join(", ", trainable())
                                    + " (GET /tinker/api/v1/get_server_capabilities)",
                            "value_error", "body", "base_model"));
        }
        ObjectNode lora = TinkerInput.lora(body.get("lora_config"));
        String refusal = admission.liveModelsLeft(session.entity);
        if (refusal != null) {
            return admission.refusedCreate(session, body, idempotencyKey, refusal, now());
        }
        // the saved weights are checkpoints of a Fulcrum model of the session's project (the member role needed)
        String trainingModel = trainingModels
                .create(session.entity, session.project, TinkerIds.trainingModelName(id), base, true).model().id();
        TinkerModel model = new TinkerModel();
        model.id = id;
        model.sessionId = session.id;
        model.userId = session.userId;
        model.trainingModelId = trainingModel;
        model.baseModel = base;
        model.lora = json.write(lora);
        model.state = "waiting";
        model.lastRequestAt = now();
        model.persistAndFlush();
        return insert(model, "create_model", 0, idempotencyKey, body).id;
    }

    /**
     * The monthly token quota of the team (or user) whose project the model's session works in: 402 once it is used up,
     * before a {@code forward} or {@code forward_backward} is queued (a usage row of the refused request, as the
     * gateway records its own). Outside a transaction: it may wait for this replica's share of the quota.
     */
    public void admitTraining(String modelId) {
        if (!meter.quotas()) {
            return;
        }
        admit(QuarkusTransaction.requiringNew().call(() -> {
            TinkerModel model = model(modelId);
            TinkerSession session = TinkerSession.findById(model.sessionId);
            return new UsageMeter.Use(UsageMeter.TINKER_TRAIN, session.entity, session.project, model.userId,
                    model.baseModel, 0, 0, 0, 402);
        }));
    }

    /** The same for a sample of the caller's sampling client. */
    public void admitSample(String samplerId) {
        if (!meter.quotas()) {
            return;
        }
        admit(QuarkusTransaction.requiringNew().call(() -> {
            TinkerSampler sampler = TinkerSampler.findById(samplerId);
            if (sampler == null || sampler.userId != access.caller().userId()) {
                throw ApiException.notFound("Sampling client " + samplerId + " not found");
            }
            TinkerSession session = TinkerSession.findById(sampler.sessionId);
            return new UsageMeter.Use(UsageMeter.TINKER_SAMPLE, session.entity, session.project, sampler.userId,
                    sampler.checkpoint != null ? sampler.checkpoint : sampler.baseModel, 0, 0, 0, 402);
        }));
    }

    /** The quota's answer for the request; {@code refused}, its usage row, recorded when it is a 402. */
    private void admit(UsageMeter.Use refused) {
        try {
            meter.admit(refused.entity());
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.QUOTA_EXCEEDED) {
                meter.record(refused);
            }
            throw e;
        }
    }

    /** The catalog's base models that workers train. */
    public List<String> trainable() {
        return baseModels.all().stream().filter(m -> baseModels.worker(m) && baseModels.inCatalog(m)).toList();
    }

    /**
     * An operation of a model, after its own checks: a new pending future, or the one a retried POST made (the same
     * {@code X-Idempotency-Key}, or the same {@code seq_id} of the model). A model no worker holds any more answers a
     * future that has failed already, saying why.
     */
    @Transactional
    public String submit(String kind, ObjectNode body, String idempotencyKey) {
        String modelId = TinkerInput.text(body, "model_id", true, 200);
        long seq = TinkerInput.integer(body, "seq_id", 1, Long.MAX_VALUE);
        TinkerModel model = model(modelId);
        if (idempotencyKey != null) {
            TinkerRequest again = TinkerRequest
                    .find("userId = ?1 and idempotencyKey = ?2", model.userId, idempotencyKey).firstResult();
            if (again != null) {
                return again.id;
            }
        }
        TinkerRequest same = TinkerRequest.find("modelId = ?1 and seqId = ?2", model.id, seq).firstResult();
        if (same != null) {
            if (!same.kind.equals(kind)) {
                throw ApiException.invalid(
                        Violation.of("seq_id " + seq + " of model " + model.id + " was a " + same.kind + " already",
                                "value_error", "body", "seq_id"));
            }
            return same.id;
        }
        if (model.state.equals(TinkerCopies.COPY)) {
            return TinkerCopies.refuse(insert(model, kind, seq, idempotencyKey, body), model, now());
        }
        if (kind.equals("save_weights_for_sampler") || kind.equals("save_weights")) {
            String name = TinkerInput.text(body, "path", false, 100);
            if (name == null) {
                throw ApiException.invalid(Violation.of(kind.equals("save_weights") ? "A name is required"
                        : "A name is required: save_weights_for_sampler(name) (the unnamed save_weights_and_get_sampling_client is not served)",
                        "missing", "body", "path"));
            }
            if (!NAME.matcher(name).matches()) {
                throw ApiException.invalid(Violation.of("Must be 1 to 100 letters, digits, '_', '.' or '-'",
                        "string_pattern_mismatch", "body", "path"));
            }
            TinkerInput.ttl(body); // they expire that long after they are saved
            String saved = savedKind(kind);
            if (TinkerCheckpoint.count("modelId = ?1 and kind = ?2 and name = ?3", model.id, saved, name) > 0) {
                throw ApiException.conflict("Model " + model.id + " saved " + saved + " " + name + " before");
            }
        }
        if (kind.equals("load_weights")) {
            loadSource(model, body);
        }
        model.lastRequestAt = now();
        TinkerRequest request = insert(model, kind, seq, idempotencyKey, body);
        if (TinkerRequest.count("modelId = ?1 and seqId = ?2", model.id, UNLOAD_SEQ) > 0) {
            request.state = "failed";
            request.error = "Model " + model.id + " was unloaded by its client (unload_model): its unsaved state is "
                    + "gone; saved weights remain: load them into a new training client";
            request.category = "user";
            request.endedAt = now();
        } else if (model.state.equals("lost") || model.state.equals("released")) {
            request.state = "failed";
            request.error = model.endedReason;
            request.category = "server";
            request.endedAt = now();
        }
        return request.id;
    }

    /**
     * {@code unload_model}: a future that is done once the model's worker released it, after the operations submitted
     * before it; at once for a model no worker held yet (released here) or one that ended already. A second unload (or
     * a retried POST) answers the first's future.
     */
    @Transactional
    public String unload(ObjectNode body, String idempotencyKey) {
        TinkerModel model = model(TinkerInput.text(body, "model_id", true, 200));
        TinkerRequest earlier = TinkerRequest.find("modelId = ?1 and seqId = ?2", model.id, UNLOAD_SEQ).firstResult();
        if (earlier == null && idempotencyKey != null) {
            earlier = TinkerRequest.find("userId = ?1 and idempotencyKey = ?2", model.userId, idempotencyKey)
                    .firstResult();
        }
        if (earlier != null) {
            return earlier.id;
        }
        model.lastRequestAt = now();
        TinkerRequest request = insert(model, UNLOAD, UNLOAD_SEQ, idempotencyKey, body);
        if (model.state.equals("waiting")) {
            workers.end(model, "released",
                    "Model " + model.id + " was unloaded by its client (unload_model) before a worker held it");
        } else if (!model.state.equals("held")) {
            workers.unloaded(request, now());
        }
        return request.id;
    }

    /** The kind of checkpoint a save makes: {@code sampler_weights} or {@code weights} (training state). */
    static String savedKind(String operation) {
        return operation.equals("save_weights") ? "weights" : "sampler_weights";
    }

    /** Saved weights named by a {@code tinker://} path: the checkpoint and its model. */
    record Saved(TinkerModel model, TinkerCheckpoint checkpoint) {
        String path() {
            return "tinker://" + model.id + "/" + checkpoint.kind + "/" + checkpoint.name;
        }
    }

    /**
     * The saved weights {@code tinker://{model_id}/{weights|sampler_weights}/{name}} of one of the caller's models; 422
     * for another form (at {@code loc}), 404 for unknown weights or another user's.
     */
    @Transactional
    public Saved saved(String path, Object... loc) {
        java.util.regex.Matcher m = path == null ? null : TinkerSampling.PATH.matcher(path);
        if (m == null || !m.matches()) {
            throw ApiException.invalid(Violation.of(
                    "Must be tinker://<model_id>/weights/<name> or " + "tinker://<model_id>/sampler_weights/<name>",
                    "value_error", loc));
        }
        TinkerModel model = TinkerModel.findById(m.group(1));
        TinkerCheckpoint checkpoint = model == null || model.userId != access.caller().userId() ? null
                : TinkerCheckpoint.find("modelId = ?1 and kind = ?2 and name = ?3", model.id, m.group(2), m.group(3))
                        .firstResult();
        if (checkpoint == null) {
            throw ApiException.notFound("No saved weights " + path);
        }
        return new Saved(model, checkpoint);
    }

    /** The saved weights {@code kind/name} of model {@code id}, as the REST paths name them (see above). */
    @Transactional
    public Saved savedAt(String id, String kind, String name) {
        return saved("tinker://" + id + "/" + kind + "/" + name, "path", "checkpoint_name");
    }

    /**
     * {@code load_weights}: the training state must be of this base model with the same LoRA settings; its files (read
     * with the caller's rights now) go with the operation to the worker, which downloads them.
     */
    private void loadSource(TinkerModel model, ObjectNode body) {
        String path = TinkerInput.text(body, "path", true, 500);
        JsonNode optimizer = body.get("optimizer");
        if (optimizer != null && !optimizer.isNull() && !optimizer.isBoolean()) {
            throw ApiException.invalid(Violation.of("Must be a boolean", "bool_type", "body", "optimizer"));
        }
        Saved saved = saved(path, "body", "path");
        if (!saved.checkpoint().kind.equals("weights")) {
            throw ApiException.invalid(Violation.of(
                    "Sampler weights hold no training state: load a tinker://<model_id>/weights/<name> path (save_state)",
                    "value_error", "body", "path"));
        }
        TinkerModel source = saved.model();
        ObjectNode theirs = json.readObject(source.lora);
        ObjectNode ours = json.readObject(model.lora);
        if (!source.baseModel.equals(model.baseModel)) {
            throw ApiException.invalid(Violation.of(
                    "The state is of base model " + source.baseModel + ", this model's is " + model.baseModel,
                    "value_error", "body", "path"));
        }
        for (String setting : List.of("rank", "train_attn", "train_mlp", "train_unembed")) {
            if (!theirs.path(setting).equals(ours.path(setting))) {
                throw ApiException
                        .invalid(
                                Violation.of(
                                        "The state was saved with " + setting + " " + theirs.path(setting)
                                                + ", this model has " + ours.path(setting)
                                                + " (create_training_client_from_state makes a " + "model that fits)",
                                        "value_error", "body", "path"));
            }
        }
        TrainingModels.ModelView view = trainingModels.model(source.trainingModelId, dev.fulcrum.accounts.Role.VIEWER);
        var files = body.putArray("files");
        for (var file : versions
                .getVersion(view.entity(), view.project(), view.name(), "step" + saved.checkpoint().step).files()) {
            files.addObject().put("path", file.path()).put("size", file.size()).put("digest", file.digest());
        }
    }

    /** {@code weights_info}: the base model and LoRA settings of saved weights of the caller's. */
    @Transactional
    public ObjectNode weightsInfo(String path) {
        Saved saved = saved(path, "body", "tinker_path");
        ObjectNode lora = json.readObject(saved.model().lora);
        return JsonNodeFactory.instance.objectNode().put("base_model", saved.model().baseModel).put("is_lora", true)
                .put("lora_rank", lora.path("rank").asInt())
                .put("train_unembed", lora.path("train_unembed").asBoolean())
                .put("train_mlp", lora.path("train_mlp").asBoolean())
                .put("train_attn", lora.path("train_attn").asBoolean());
    }

    TinkerRequest insert(TinkerModel model, String kind, long seq, String idempotencyKey, ObjectNode body) {
        TinkerRequest request = new TinkerRequest();
        request.id = TinkerIds.random("req-", 24);
        request.userId = model.userId;
        request.modelId = model.id;
        request.kind = kind;
        request.seqId = seq;
        request.idempotencyKey = idempotencyKey;
        request.request = json.write(body);
        request.state = "pending";
        request.persistAndFlush();
        return request;
    }

    /** A sample's future: new (to be run), or the one a retried POST made. */
    record Submitted(String requestId, TinkerSampler sampler, String entity, String project, boolean fresh) {
    }

    /** A running future of the caller's sampling client. */
    @Transactional
    public Submitted submitSample(String samplerId, ObjectNode body, String idempotencyKey) {
        TinkerSampler sampler = TinkerSampler.findById(samplerId);
        if (sampler == null || sampler.userId != access.caller().userId()) {
            throw ApiException.notFound("Sampling client " + samplerId + " not found");
        }
        TinkerSession session = session(sampler.sessionId);
        if (idempotencyKey != null) {
            TinkerRequest again = TinkerRequest
                    .find("userId = ?1 and idempotencyKey = ?2", sampler.userId, idempotencyKey).firstResult();
            if (again != null) {
                return new Submitted(again.id, sampler, session.entity, session.project, false);
            }
        }
        TinkerRequest request = new TinkerRequest();
        request.id = TinkerIds.random("req-", 24);
        request.userId = sampler.userId;
        request.samplerId = sampler.id;
        request.kind = "sample";
        JsonNode seq = body.get("seq_id");
        request.seqId = seq != null && seq.canConvertToLong() ? seq.asLong() : 0;
        request.idempotencyKey = idempotencyKey;
        request.request = json.write(body);
        request.state = "running";
        request.persistAndFlush();
        return new Submitted(request.id, sampler, session.entity, session.project, true);
    }

    OffsetDateTime now() {
        return em.createQuery("select offset datetime", OffsetDateTime.class).getSingleResult();
    }

    /** 410: the session ended, or the result is no longer kept. */
    static final class Gone extends RuntimeException {
        Gone(String message) {
            super(message, null, false, false);
        }
    }
}

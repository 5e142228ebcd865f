package dev.fulcrum.tinker;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.jwt.JsonWebToken;
import org.hibernate.Timeouts;
import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Authentication;
import dev.fulcrum.accounts.JwtTokens;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.Workers;

/**
 * The worker side of Tinker models: a {@code fulcrum-worker} of the base model claims a waiting model (with a server
 * administrator's key) and holds it under a lease, which every call of its model-scoped token renews; it takes the
 * model's operations one at a time in {@code seq_id} order and ends each with its result or failure. A model whose
 * lease runs out is lost: its unsaved state went with the worker, so its pending and later operations fail, saying so.
 */
@ApplicationScoped
public class TinkerWorkers {

    static final String SCOPE = "tinker-model";
    private static final Logger LOG = Logger.getLogger(TinkerWorkers.class);
    private static final long POLL_MILLIS = 100;
    /** A model may be held for days; each call still needs the claim's attempt to hold it. */
    private static final java.time.Duration TOKEN_LIFETIME = java.time.Duration.ofDays(7);
    private static final String LOCK_TIMEOUT = "jakarta.persistence.lock.timeout";

    @Inject
    Access access;

    @Inject
    Workers workers;

    @Inject
    JwtTokens jwt;

    @Inject
    TinkerSettings settings;

    @Inject
    StoredJson json;

    @Inject
    EntityManager em;

    @Inject
    dev.fulcrum.artifacts.BlobChecksums checksums;

    @Inject
    dev.fulcrum.artifacts.BlobStore blobs;

    @Inject
    dev.fulcrum.training.TrainingSettings training;

    @Inject
    dev.fulcrum.training.TrainingModels trainingModels;

    record Claim(TinkerModel model, String token, ObjectNode lora) {
    }

    /** What {@code next} answers: an operation to run, or that the model must be released (with why). */
    record Next(TinkerRequest operation, boolean release, String reason, OffsetDateTime leaseUntil) {
    }

    /**
     * The oldest waiting model of the worker's base models, now held by it, when it holds fewer than {@code maxModels}
     * (default 1); null when none came within the wait, or when the worker stopped {@code listening} (its connection
     * closed during the long poll: a model taken then would wait for a lease's end with no worker, and fail). A worker
     * makes one claim at a time.
     */
    public Claim claim(String workerId, Integer wait, Integer maxModels, BooleanSupplier listening) {
        access.serverAdmin();
        if (wait != null && (wait < 0 || wait > 60)) {
            throw ApiException.invalid(Violation.of("Must be between 0 and 60", "less_than_equal", "query", "wait"));
        }
        if (maxModels != null && (maxModels < 1 || maxModels > 256)) {
            throw ApiException
                    .invalid(Violation.of("Must be between 1 and 256", "less_than_equal", "query", "max_models"));
        }
        int room = maxModels == null ? 1 : maxModels;
        List<String> bases = workers.worker(workerId).baseModels();
        long deadline = System.nanoTime() + (wait == null ? 5 : wait) * 1_000_000_000L;
        while (listening.getAsBoolean()) {
            TinkerModel held = QuarkusTransaction.requiringNew().call(() -> take(workerId, bases, room));
            if (held != null && !listening.getAsBoolean()) {
                QuarkusTransaction.requiringNew().run(() -> giveBack(held.id, workerId, held.attempt));
                return null;
            }
            if (held != null) {
                String token = jwt.sign(workerId,
                        Map.of("tinker_model", held.id, "attempt", held.attempt, "scope", SCOPE), TOKEN_LIFETIME);
                return new Claim(held, token, json.readObject(held.lora));
            }
            if (System.nanoTime() >= deadline) {
                return null;
            }
            sleep();
        }
        return null;
    }

    /** A model just taken for a worker that went away, waiting again as before (its attempt not counted). */
    private void giveBack(String modelId, String workerId, int attempt) {
        TinkerModel model = TinkerModel.findById(modelId, LockModeType.PESSIMISTIC_WRITE);
        if (model != null && "held".equals(model.state) && workerId.equals(model.workerId)
                && model.attempt == attempt) {
            model.state = "waiting";
            model.workerId = null;
            model.attempt--;
            model.leaseUntil = null;
        }
    }

    private TinkerModel take(String workerId, List<String> bases, int room) {
        if (TinkerModel.count("state = 'held' and workerId = ?1", workerId) >= room) {
            return null;
        }
        TinkerModel model = TinkerModel
                .<TinkerModel> find("state = 'waiting' and baseModel in ?1 order by createdAt, id", bases)
                .withLock(LockModeType.PESSIMISTIC_WRITE).withHint(LOCK_TIMEOUT, Timeouts.SKIP_LOCKED_MILLI)
                .firstResult();
        if (model == null) {
            return null;
        }
        model.state = "held";
        model.workerId = workerId;
        model.attempt++;
        model.leaseUntil = now().plus(settings.lease());
        return model;
    }

    /**
     * The model of a model-scoped token, its lease renewed; 401 for a bad token or one of another model, 409 when the
     * token's attempt no longer holds it.
     */
    @Transactional
    public TinkerModel held(String authorization, String modelId) {
        JsonWebToken token = jwt.verify(Authentication.bearer(authorization).orElseThrow(
                () -> ApiException.unauthorized("Send the model token of the claim: Authorization: Bearer <token>")));
        Object model = token.getClaim("tinker_model");
        Object attempt = token.getClaim("attempt");
        if (!SCOPE.equals(String.valueOf((Object) token.getClaim("scope"))) || model == null
                || !modelId.equals(model.toString()) || attempt == null) {
            throw ApiException.unauthorized("The token is not for Tinker model " + modelId);
        }
        TinkerModel row = TinkerModel.findById(modelId);
        if (row == null || !row.state.equals("held") || row.attempt != Integer.parseInt(attempt.toString())) {
            throw ApiException.conflict("This worker no longer holds Tinker model " + modelId
                    + (row != null && row.endedReason != null ? " (" + row.endedReason + ")" : "") + "; drop it");
        }
        row.leaseUntil = now().plus(settings.lease());
        return row;
    }

    /** The model's next operation in seq_id order (the running one again, when a lost answer made the worker ask). */
    public Next next(String authorization, String modelId, Integer wait) {
        if (wait != null && (wait < 0 || wait > 60)) {
            throw ApiException.invalid(Violation.of("Must be between 0 and 60", "less_than_equal", "query", "wait"));
        }
        long deadline = System.nanoTime() + (wait == null ? 20 : wait) * 1_000_000_000L;
        while (true) {
            Next next = QuarkusTransaction.requiringNew().call(() -> take(held(authorization, modelId)));
            if (next.operation() != null || next.release() || System.nanoTime() >= deadline) {
                return next;
            }
            sleep();
        }
    }

    private Next take(TinkerModel model) {
        TinkerRequest op = TinkerRequest
                .<TinkerRequest> find("modelId = ?1 and state in ('pending', 'running') order by seqId", model.id)
                .firstResult();
        if (op != null && op.kind.equals(Tinker.UNLOAD)) {
            // the operations before it are done: the worker drops the model, and its release ends the unload's future
            return new Next(null, true, "its client unloaded it (unload_model)", model.leaseUntil);
        }
        if (op != null) {
            op.state = "running";
            return new Next(op, false, null, model.leaseUntil);
        }
        TinkerSession session = TinkerSession.findById(model.sessionId);
        OffsetDateTime now = now();
        if (session == null || session.endedAt != null) {
            return new Next(null, true, "its session ended", model.leaseUntil);
        }
        if (model.lastRequestAt.plus(settings.idleRelease()).isBefore(now)) {
            return new Next(null, true, "no operation for " + settings.idleRelease().toMinutes() + " minutes",
                    model.leaseUntil);
        }
        return new Next(null, false, null, model.leaseUntil);
    }

    /** An ended operation: the model's lease, and the usage of a forward or forward_backward (else null). */
    record Finished(OffsetDateTime leaseUntil, UsageMeter.Use use) {
    }

    /**
     * Ends the model's running operation {@code requestId} with its result or failure; a {@code forward} or
     * {@code forward_backward} counts its datums' tokens as Tinker training usage, to be recorded once this commits.
     */
    @Transactional
    public Finished finish(String authorization, String modelId, String requestId, ObjectNode body) {
        TinkerModel model = held(authorization, modelId);
        TinkerRequest op = TinkerRequest.findById(requestId);
        if (op == null || !modelId.equals(op.modelId)) {
            throw ApiException.notFound("Operation " + requestId + " of model " + modelId + " not found");
        }
        if (!op.state.equals("running")) {
            throw ApiException.conflict("Operation " + requestId + " is " + op.state + ", not running");
        }
        JsonNode result = body == null ? null : body.get("result");
        JsonNode error = body == null ? null : body.get("error");
        if ((result == null || result.isNull()) == (error == null || error.isNull())) {
            throw ApiException.invalid(Violation.of("Send either result or error", "value_error", "body"));
        }
        if (result != null && !result.isNull()) {
            if (!result.isObject()) {
                throw ApiException.invalid(Violation.of("Must be an object", "dict_type", "body", "result"));
            }
            op.state = "done";
            op.result = json.write(op.kind.startsWith("save_weights") ? saved(model, op) : result);
        } else {
            String category = body.path("category").asText("server");
            if (!error.isTextual() || !List.of("user", "server").contains(category)) {
                throw ApiException.invalid(Violation.of("error must be a string, category user or server",
                        "value_error", "body", "error"));
            }
            op.state = "failed";
            op.error = error.asText();
            op.category = category;
        }
        op.endedAt = now();
        UsageMeter.Use use = null;
        if (op.kind.equals("forward") || op.kind.equals("forward_backward")) {
            TinkerSession session = TinkerSession.findById(model.sessionId);
            int tokens = TinkerInput.tokens(json.readObject(op.request).path(op.kind + "_input"));
            int status = op.state.equals("done") ? 200 : op.category.equals("user") ? 400 : 500;
            long millis = java.time.Duration.between(op.createdAt, op.endedAt).toMillis();
            use = new UsageMeter.Use(UsageMeter.TINKER_TRAIN, session.entity, session.project, model.userId,
                    model.baseModel, status == 200 ? tokens : 0, 0, (int) Math.min(millis, Integer.MAX_VALUE), status);
        }
        return new Finished(model.leaseUntil, use);
    }

    /**
     * The checkpoint a save makes of the files uploaded for it: the next step of the model's Fulcrum training model,
     * made with its user's rights; the result names the weights as the SDK expects. A {@code ttl_seconds} of the save
     * counts from now.
     */
    private ObjectNode saved(TinkerModel model, TinkerRequest op) {
        ObjectNode request = json.readObject(op.request);
        String name = request.path("path").asText();
        String kind = Tinker.savedKind(op.kind);
        List<TinkerFile> files = TinkerFile.list("requestId", op.id);
        if (files.isEmpty()) {
            throw ApiException.invalid(Violation.of("Upload the weights' files before the result", "missing", "body"));
        }
        if (TinkerCheckpoint.count("modelId = ?1 and kind = ?2 and name = ?3", model.id, kind, name) > 0) {
            throw ApiException.conflict("Model " + model.id + " saved " + kind + " " + name + " before");
        }
        access.actFor(model.userId);
        int step = trainingModels.addCheckpoint(model.trainingModelId, files.stream()
                .map(f -> new dev.fulcrum.artifacts.VersionWrites.StoredFile(f.path, f.digest, f.size)).toList(),
                JsonNodeFactory.instance.objectNode().put("tinker_model", model.id).put(kind, name));
        TinkerCheckpoint checkpoint = new TinkerCheckpoint();
        checkpoint.modelId = model.id;
        checkpoint.kind = kind;
        checkpoint.name = name;
        checkpoint.step = step;
        java.time.Duration ttl = TinkerInput.ttl(request);
        checkpoint.expiresAt = ttl == null ? null : now().plus(ttl);
        checkpoint.persist();
        return JsonNodeFactory.instance.objectNode().put("path", "tinker://" + model.id + "/" + kind + "/" + name)
                .put("type", op.kind);
    }

    /**
     * A file of the training state the running {@code load_weights} operation loads: one of the files its POST listed
     * (read with its user's rights then), from the blob store.
     */
    @Transactional
    public TinkerFile loadFile(String authorization, String modelId, String requestId, String path) {
        held(authorization, modelId);
        TinkerRequest op = TinkerRequest.findById(requestId);
        if (op == null || !modelId.equals(op.modelId)) {
            throw ApiException.notFound("Operation " + requestId + " of model " + modelId + " not found");
        }
        if (!op.state.equals("running") || !op.kind.equals("load_weights")) {
            throw ApiException.conflict("Operation " + requestId + " is no running load_weights");
        }
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        for (JsonNode file : json.readObject(op.request).path("files")) {
            if (file.path("path").asText().equals(path)) {
                TinkerFile found = new TinkerFile();
                found.requestId = requestId;
                found.path = path;
                found.digest = file.path("digest").asText();
                found.size = file.path("size").asLong();
                return found;
            }
        }
        throw ApiException.notFound("No file " + path + " in the state operation " + requestId + " loads");
    }

    /** The content of a file in the blob store. */
    public java.io.InputStream open(TinkerFile file) {
        try {
            return blobs.open(file.digest, 0, file.size);
        } catch (java.io.IOException e) {
            throw ApiException.notFound("The file " + file.path + " is no longer stored (its checkpoint was deleted)");
        }
    }

    private static final java.util.regex.Pattern FILE_PATH = java.util.regex.Pattern
            .compile("[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*");

    /**
     * Stores a file of the weights the running save {@code requestId} makes, streamed to the blob store with no
     * transaction open while it arrives.
     */
    public TinkerFile upload(String authorization, String modelId, String requestId, String path,
            java.io.InputStream body) {
        if (path == null || path.length() > 512 || !FILE_PATH.matcher(path).matches()
                || java.util.Arrays.asList(path.split("/")).stream().anyMatch(s -> s.equals(".") || s.equals(".."))) {
            throw ApiException.invalid(Violation.of(
                    "Must be a relative file path of letters, digits, '_', '.', '-' and '/', without '.' or '..' segments",
                    path == null ? "missing" : "value_error", "query", "path"));
        }
        QuarkusTransaction.requiringNew().run(() -> {
            held(authorization, modelId);
            TinkerRequest op = TinkerRequest.findById(requestId);
            if (op == null || !modelId.equals(op.modelId)) {
                throw ApiException.notFound("Operation " + requestId + " of model " + modelId + " not found");
            }
            if (!op.state.equals("running") || !op.kind.startsWith("save_weights")) {
                throw ApiException.conflict("Operation " + requestId + " is no running save");
            }
        });
        if (body == null) {
            throw ApiException.invalid(Violation.of("The file content is required", "missing", "body"));
        }
        dev.fulcrum.artifacts.BlobStore.Blob blob;
        try {
            blob = checksums.put(body, training.maxCheckpointFileBytes()).blob();
        } catch (dev.fulcrum.artifacts.BlobStore.TooLarge e) {
            throw ApiException
                    .payloadTooLarge("The file is larger than " + training.maxCheckpointFileBytes() + " bytes");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return QuarkusTransaction.requiringNew().call(() -> {
            TinkerFile.delete("requestId = ?1 and path = ?2", requestId, path);
            TinkerFile file = new TinkerFile();
            file.requestId = requestId;
            file.path = path;
            file.digest = blob.digest();
            file.size = blob.size();
            file.persist();
            return file;
        });
    }

    /** Renews the lease; answers its new end. */
    @Transactional
    public OffsetDateTime heartbeat(String authorization, String modelId) {
        return held(authorization, modelId).leaseUntil;
    }

    /** The worker dropped the model: its state is gone, its open operations fail with why. */
    @Transactional
    public OffsetDateTime release(String authorization, String modelId, ObjectNode body) {
        TinkerModel model = held(authorization, modelId);
        JsonNode reason = body == null ? null : body.get("reason");
        if (reason != null && !reason.isNull() && !reason.isTextual()) {
            throw ApiException.invalid(Violation.of("Must be a string", "string_type", "body", "reason"));
        }
        end(model, "released",
                "Model " + model.id + " was released by its worker"
                        + (reason != null && !reason.isNull() ? " (" + reason.asText() + ")" : "")
                        + ": its unsaved state is gone; saved weights remain");
        return model.leaseUntil;
    }

    /**
     * The model's end ({@code released} or {@code lost}, and why): its open operations fail with the reason, and an
     * {@code unload_model} waiting for it is done.
     */
    void end(TinkerModel model, String state, String reason) {
        model.state = state;
        model.endedReason = reason;
        OffsetDateTime now = now();
        TinkerRequest unload = TinkerRequest
                .<TinkerRequest> find("modelId = ?1 and seqId = ?2 and state = 'pending'", model.id, Tinker.UNLOAD_SEQ)
                .firstResult();
        if (unload != null) {
            unloaded(unload, now);
        }
        TinkerRequest.update(
                "state = 'failed', error = ?2, category = 'server', endedAt = ?3 "
                        + "where modelId = ?1 and state in ('pending', 'running') and kind <> ?4",
                model.id, reason, now, Tinker.UNLOAD);
    }

    /** An {@code unload_model}'s future done: the model is no longer held. */
    void unloaded(TinkerRequest unload, OffsetDateTime now) {
        unload.state = "done";
        unload.result = json.write(
                JsonNodeFactory.instance.objectNode().put("model_id", unload.modelId).put("type", Tinker.UNLOAD));
        unload.endedAt = now;
    }

    /**
     * Ended sessions (no heartbeat), lost models (no lease renewal), models waiting for a worker in an ended session,
     * and results past their retention. On every replica; each change is a conditional update, so replicas agree.
     */
    @Scheduled(every = "${fulcrum.tinker.sweep-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        try {
            QuarkusTransaction.requiringNew().run(this::sweepOnce);
        } catch (RuntimeException e) {
            LOG.warnf("Tinker sweep failed: %s", e.toString());
        }
    }

    void sweepOnce() {
        OffsetDateTime now = now();
        TinkerSession.update("endedAt = ?1 where endedAt is null and heartbeatAt < ?2", now,
                now.minus(settings.sessionTimeout()));
        for (TinkerModel model : TinkerModel.<TinkerModel> list("state = 'held' and leaseUntil < ?1", now)) {
            end(model, "lost", "The fulcrum-worker holding model " + model.id + " (" + model.workerId
                    + ") stopped renewing its lease: the model's unsaved state (weights since the last save, optimizer"
                    + " state, accumulated gradients) is gone; saved weights remain: load them into a new training"
                    + " client");
        }
        for (TinkerModel model : TinkerModel.<TinkerModel> list(
                "state = 'waiting' and sessionId in (select s.id from TinkerSession s where s.endedAt is not null)")) {
            end(model, "released", "Model " + model.id + " was never held: its session ended first");
        }
        // a sample whose replica stopped while it ran
        TinkerRequest.update(
                "state = 'failed', error = ?1, category = 'server', endedAt = ?2 "
                        + "where kind = 'sample' and state = 'running' and createdAt < ?3",
                "The server replica sampling this stopped: sample again", now, now.minusMinutes(10));
        TinkerRequest.update("state = 'expired', result = null where state in ('done', 'failed') and endedAt < ?1",
                now.minus(settings.resultRetention()));
    }

    private OffsetDateTime now() {
        return em.createQuery("select offset datetime", OffsetDateTime.class).getSingleResult();
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("Interrupted");
        }
    }

    static ObjectNode lease(OffsetDateTime until) {
        return JsonNodeFactory.instance.objectNode().put("lease_expires_at", until.toString());
    }
}

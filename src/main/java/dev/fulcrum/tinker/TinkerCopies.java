package dev.fulcrum.tinker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.BlobCollector;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.TrainingModels;

/**
 * {@code copy_weights}: saved weights of the caller's copied into a project as a new training run in state
 * {@code copy}, which nothing trains. Its Fulcrum training model holds one checkpoint whose artifact version lists the
 * source's stored files (blobs are shared, never copied; each version keeps its blobs alive on its own).
 */
@ApplicationScoped
public class TinkerCopies {

    /** The state of a copy. */
    static final String COPY = "copy";
    /** The kind of the request row that remembers a copy's {@code X-Idempotency-Key}. */
    static final String KIND = "copy_weights";
    /** The header of the SDK's {@code weights_access_token}, not served. */
    static final String ACCESS_TOKEN = "X-Tinker-Weights-Access-Token";

    @Inject
    Access access;

    @Inject
    Tinker tinker;

    @Inject
    TrainingModels trainingModels;

    @Inject
    ArtifactVersions versions;

    @Inject
    BlobCollector collector;

    @Inject
    BlobStore blobs;

    @Inject
    StoredJson json;

    /** An operation of a training client on a copy: failed already, as the caller's. */
    static String refuse(TinkerRequest request, TinkerModel model, OffsetDateTime now) {
        request.state = "failed";
        request.error = "Model " + model.id + " is a copy of " + model.copiedFrom + " (copy_weights): it cannot be "
                + "trained on; create_training_client_from_state(path) starts a training client from a weights copy";
        request.category = "user";
        request.endedAt = now;
        return request.id;
    }

    /** The copy's {@code tinker_path}: a new one, or the one a retry of the same copy made. */
    @Transactional
    public String copy(ObjectNode body, String idempotencyKey, boolean accessToken) {
        String source = TinkerInput.text(body, "source_path", true, 500);
        String sessionId = TinkerInput.text(body, "session_id", false, 200);
        String destination = TinkerInput.text(body, "destination_project_id", false, 300);
        TinkerInput.ttl(body); // the copy expires that long after it is made
        refuseUnserved(body, accessToken);
        if ((sessionId == null) == (destination == null)) {
            throw ApiException.invalid(Violation.of(
                    "Give destination_project_id, or session_id and model_seq_id (the copy goes to the session's project)",
                    "value_error", "body", sessionId == null ? "destination_project_id" : "session_id"));
        }
        long seq = sessionId == null ? 0 : TinkerInput.integer(body, "model_seq_id", 0, 1_000_000);
        long user = access.caller().userId();
        if (idempotencyKey != null) {
            TinkerRequest again = TinkerRequest.find("userId = ?1 and idempotencyKey = ?2", user, idempotencyKey)
                    .firstResult();
            if (again != null) {
                if (!again.kind.equals(KIND)) {
                    throw ApiException.conflict("X-Idempotency-Key " + idempotencyKey + " was used by a " + again.kind);
                }
                return path(TinkerModel.findById(again.modelId));
            }
        }
        // the source as a sampling client would read it: the caller's own saved weights, their files with the
        // caller's rights on the Fulcrum model that holds them
        Tinker.Saved saved = tinker.saved(source, "body", "source_path");
        TrainingModels.ModelView from = trainingModels.model(saved.model().trainingModelId, Role.VIEWER);
        List<StoredFile> files = new ArrayList<>();
        for (var file : versions
                .getVersion(from.entity(), from.project(), from.name(), "step" + saved.checkpoint().step).files()) {
            files.add(new StoredFile(file.path(), file.digest(), file.size()));
        }
        TinkerSession session;
        if (sessionId != null) {
            session = tinker.session(sessionId);
            TinkerModel taken = TinkerModel.findById(TinkerIds.model(session.id, seq));
            if (taken != null) {
                if (COPY.equals(taken.state) && saved.path().equals(taken.copiedFrom)) {
                    return path(taken);
                }
                throw ApiException.conflict("model_seq_id " + seq + " of session " + session.id + " is "
                        + (taken.copiedFrom != null ? "a copy of " + taken.copiedFrom : "a training client")
                        + " already");
            }
        } else {
            // a session of its own, ended at once: the copy belongs to no live client
            session = tinker.newSession(tinker.project(destination, "body", "destination_project_id"), null,
                    JsonNodeFactory.instance.arrayNode());
            session.endedAt = tinker.now();
        }
        return made(saved, session, seq, files, idempotencyKey, body);
    }

    private void refuseUnserved(ObjectNode body, boolean accessToken) {
        JsonNode token = body.get("weights_access_token");
        if (accessToken || (token != null && !token.isNull())) {
            String message = "Weights access tokens are not served here: access to saved weights is by the caller's "
                    + "roles (copy weights of your own training runs)";
            throw ApiException.invalid(token != null && !token.isNull()
                    ? Violation.of(message, "value_error", "body", "weights_access_token")
                    : Violation.of(message, "value_error", "header", ACCESS_TOKEN));
        }
    }

    /** The copy: its training run, the Fulcrum checkpoint of the source's files, and the row of its idempotency key. */
    private String made(Tinker.Saved saved, TinkerSession session, long seq, List<StoredFile> files,
            String idempotencyKey, ObjectNode body) {
        TinkerModel source = saved.model();
        TinkerModel copy = new TinkerModel();
        copy.id = TinkerIds.model(session.id, seq);
        copy.sessionId = session.id;
        copy.userId = session.userId;
        copy.trainingModelId = trainingModels
                .create(session.entity, session.project, TinkerIds.trainingModelName(copy.id), source.baseModel, true)
                .model().id();
        copy.baseModel = source.baseModel;
        copy.lora = source.lora;
        copy.state = COPY;
        copy.copiedFrom = saved.path();
        copy.lastRequestAt = tinker.now();
        copy.endedReason = "A copy of " + saved.path() + " (copy_weights)";
        copy.persistAndFlush();
        // each blob is marked written before it is looked for, as every write of the blob store does, so the
        // collector cannot remove one that the source's deletion just left unused while this version takes it
        for (StoredFile file : files) {
            collector.written(file.digest());
            try {
                if (blobs.size(file.digest()).isEmpty()) {
                    throw ApiException.notFound("No saved weights " + saved.path() + " (its files are gone)");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        String kind = saved.checkpoint().kind;
        String name = saved.checkpoint().name;
        int step = trainingModels.addCheckpoint(copy.trainingModelId, files, JsonNodeFactory.instance.objectNode()
                .put("tinker_model", copy.id).put(kind, name).put("copied_from", saved.path()));
        TinkerCheckpoint checkpoint = new TinkerCheckpoint();
        checkpoint.modelId = copy.id;
        checkpoint.kind = kind;
        checkpoint.name = name;
        checkpoint.step = step;
        Duration ttl = TinkerInput.ttl(body);
        checkpoint.expiresAt = ttl == null ? null : copy.lastRequestAt.plus(ttl);
        checkpoint.persist();
        String path = "tinker://" + copy.id + "/" + kind + "/" + name;
        TinkerRequest request = tinker.insert(copy, KIND, 0, idempotencyKey, body);
        request.state = "done";
        request.result = json.write(JsonNodeFactory.instance.objectNode().put("tinker_path", path));
        request.endedAt = copy.lastRequestAt;
        return path;
    }

    /** The path of a copy's saved weights (one checkpoint, the source's kind and name). */
    private static String path(TinkerModel copy) {
        TinkerCheckpoint only = copy == null ? null : TinkerCheckpoint.find("modelId", copy.id).firstResult();
        if (only == null) {
            throw ApiException.notFound("The copy was deleted since");
        }
        return "tinker://" + copy.id + "/" + only.kind + "/" + only.name;
    }
}

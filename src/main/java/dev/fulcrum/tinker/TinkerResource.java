package dev.fulcrum.tinker;

import java.util.Date;
import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.AcceptsAnonymous;
import dev.fulcrum.accounts.AcceptsApiKeyHeader;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.tinker.api.TinkerApi;

/**
 * The Tinker SDK's operations ({@code openapi/tinker.yaml}); the key comes as {@code X-API-Key: tml-<key>}. Every
 * operation of a training client answers a future at once; its result comes from {@code retrieve_future}.
 */
@AcceptsApiKeyHeader(prefix = "tml-")
public class TinkerResource implements TinkerApi {

    /** The header the SDK repeats on the retries of one call. */
    static final String IDEMPOTENCY_KEY = "X-Idempotency-Key";

    /** The results the SDK 0.2x and later reads as protobuf ({@code ForwardBackwardOutput}, {@code SampleResponse}). */
    private static final Set<String> PROTOBUF_RESULTS = Set.of("forward", "forward_backward", "sample");

    @Inject
    Tinker tinker;

    @Inject
    TinkerFutures futures;

    @Inject
    TinkerSettings settings;

    @Inject
    TinkerSampling sampling;

    @Inject
    TinkerRuns runs;

    @Inject
    TinkerCopies copies;

    @Inject
    TinkerArchives archives;

    @Inject
    StoredJson json;

    @Context
    HttpHeaders headers;

    @Context
    UriInfo uri;

    @ServerExceptionMapper
    public Response gone(Tinker.Gone e) {
        return Response.status(410).type(MediaType.APPLICATION_JSON_TYPE).entity(Map.of("detail", e.getMessage()))
                .build();
    }

    /** Whether the SDK asks for protobuf results (0.2x and later): those of these operations are. */
    private boolean acceptsProtobuf() {
        return headers.getAcceptableMediaTypes().stream().anyMatch(
                type -> !type.isWildcardType() && type.isCompatible(MediaType.valueOf(TinkerProto.MEDIA_TYPE)));
    }

    private String idempotencyKey() {
        String key = headers.getHeaderString(IDEMPOTENCY_KEY);
        return key == null || key.isBlank() || key.length() > 200 ? null : key;
    }

    private static Response future(String requestId, String modelId) {
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("request_id", requestId);
        if (modelId != null) {
            body.put("model_id", modelId);
        }
        return Response.ok(body).build();
    }

    @Override
    public Response tinkerHealthz() {
        return Response.ok(Map.of("status", "ok")).build();
    }

    @Override
    public Response tinkerClientConfig(ObjectNode body) {
        // no JWT exchange; a forward_backward's chunks one after the other, so they arrive in seq_id order; SDKs that
        // send forward_backward as protobuf compress it (TinkerProtoReader)
        return Response.ok(Map.of("pjwt_auth_enabled", false, "credential_default_source", "api_key",
                "parallel_fwdbwd_chunks", false, "proto_compress_fwdbwd", true)).build();
    }

    @Override
    public Response tinkerClientDynamicConfig(ObjectNode body) {
        // abandoned samples run to their end: no cancel_future
        return Response.ok(
                Map.of("refresh_interval_sec", 300, "sample_cancel_enabled", false, "sample_cancel_max_batch_size", 64))
                .build();
    }

    @Override
    public Response tinkerCreateSession(ObjectNode body) {
        Tinker.Session session = tinker.createSession(TinkerInput.body(body));
        return Response
                .ok(Map.of("session_id", session.id(), "type", "create_session", "info_message",
                        "Fulcrum: this session's models are trained in project " + session.entity() + "/"
                                + session.project() + " (their saved weights are checkpoints of a model there)"))
                .build();
    }

    @Override
    public Response tinkerSessionHeartbeat(ObjectNode body) {
        tinker.heartbeat(TinkerInput.text(TinkerInput.body(body), "session_id", true, 200));
        return Response.ok(Map.of("type", "session_heartbeat")).build();
    }

    @Override
    public Response tinkerTelemetry(ObjectNode body) {
        return Response.ok(Map.of("status", "accepted")).build();
    }

    @Override
    public Response tinkerServerCapabilities() {
        return Response.ok(Map.of("supported_models",
                tinker.trainable().stream().map(name -> Map.of("model_name", name)).toList())).build();
    }

    @Override
    public Response tinkerRetrieveFuture(ObjectNode body) {
        String id = TinkerInput.text(TinkerInput.body(body), "request_id", true, 200);
        TinkerFutures.Outcome outcome = futures.retrieve(id);
        if (outcome instanceof TinkerFutures.Done done) {
            if (acceptsProtobuf() && PROTOBUF_RESULTS.contains(done.kind())) {
                JsonNode result = json.readObject(done.result());
                return Response.ok(done.kind().equals("sample") ? TinkerProtoResults.sampleResponse(result)
                        : TinkerProtoResults.forwardBackwardOutput(result), TinkerProto.MEDIA_TYPE).build();
            }
            return Response.ok(done.result(), MediaType.APPLICATION_JSON_TYPE).build();
        }
        if (outcome instanceof TinkerFutures.Failed failed) {
            return Response.ok(Map.of("error", failed.error(), "category", failed.category())).build();
        }
        if (outcome instanceof TinkerFutures.Pending pending) {
            ObjectNode state = JsonNodeFactory.instance.objectNode().put("queue_state", pending.queueState());
            if (pending.reason() != null) {
                state.put("queue_state_reason", pending.reason());
            }
            return Response.status(408).type(MediaType.APPLICATION_JSON_TYPE).entity(state).build();
        }
        return gone(new Tinker.Gone("The result of " + id + " is no longer kept (results are kept "
                + settings.resultRetention().toMinutes() + " minutes after their operation ended)"));
    }

    @Override
    public Response tinkerCreateModel(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        return future(tinker.createModel(request, idempotencyKey()), null);
    }

    @Override
    public Response tinkerGetInfo(ObjectNode body) {
        return Response.ok(tinker.info(TinkerInput.text(TinkerInput.body(body), "model_id", true, 200))).build();
    }

    @Override
    public Response tinkerForward(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        TinkerInput.forwardInput(request.get("forward_input"), "forward_input");
        tinker.admitTraining(TinkerInput.text(request, "model_id", true, 200));
        return future(tinker.submit("forward", request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerForwardBackward(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        if (request.path("forward_only").asBoolean(false)) {
            // the protobuf body's forward (the SDK 0.2x and later): the JSON forward's body
            request.remove("forward_only");
            request.set("forward_input", request.remove("forward_backward_input"));
            return tinkerForward(request);
        }
        TinkerInput.forwardInput(request.get("forward_backward_input"), "forward_backward_input");
        tinker.admitTraining(TinkerInput.text(request, "model_id", true, 200));
        return future(tinker.submit("forward_backward", request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerOptimStep(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        TinkerInput.adam(request.get("adam_params"));
        return future(tinker.submit("optim_step", request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerSaveWeightsForSampler(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        return future(tinker.submit("save_weights_for_sampler", request, idempotencyKey()),
                request.path("model_id").asText());
    }

    @Override
    public Response tinkerSaveWeights(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        return future(tinker.submit("save_weights", request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerUnloadModel(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        return future(tinker.unload(request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerLoadWeights(ObjectNode body) {
        ObjectNode request = TinkerInput.body(body);
        return future(tinker.submit("load_weights", request, idempotencyKey()), request.path("model_id").asText());
    }

    @Override
    public Response tinkerWeightsInfo(ObjectNode body) {
        return Response.ok(tinker.weightsInfo(TinkerInput.text(TinkerInput.body(body), "tinker_path", true, 500)))
                .build();
    }

    @Override
    public Response tinkerCopyWeights(ObjectNode body, String idempotencyKey, String weightsAccessToken) {
        String path = copies.copy(TinkerInput.body(body), idempotencyKey(), weightsAccessToken != null);
        return Response.ok(Map.of("tinker_path", path)).build();
    }

    @Override
    public Response tinkerListTrainingRuns(Integer limit, Integer offset, String accessScope) {
        return Response.ok(runs.runs(limit, offset, accessScope)).build();
    }

    @Override
    public Response tinkerGetTrainingRun(String trainingRunId, String accessScope) {
        return Response.ok(runs.run(trainingRunId, accessScope)).build();
    }

    @Override
    public Response tinkerListCheckpoints(String trainingRunId) {
        return Response.ok(runs.checkpoints(trainingRunId)).build();
    }

    @Override
    public Response tinkerDeleteCheckpoint(String trainingRunId, String checkpointKind, String checkpointName) {
        runs.delete(trainingRunId, checkpointKind, checkpointName);
        return Response.noContent().build();
    }

    @Override
    public Response tinkerCheckpointArchiveUrl(String trainingRunId, String checkpointKind, String checkpointName) {
        TinkerArchives.Signed signed = archives.sign(trainingRunId, checkpointKind, checkpointName, uri.getBaseUri());
        return Response.status(Response.Status.FOUND).location(signed.url()).expires(Date.from(signed.expires()))
                .build();
    }

    @Override
    @AcceptsAnonymous
    public Response tinkerDownloadCheckpointArchive(String trainingRunId, String checkpointKind, String checkpointName,
            Long expires, String signature) {
        TinkerArchives.Archive archive = archives.archive(trainingRunId, checkpointKind, checkpointName, expires,
                signature);
        StreamingOutput body = out -> archives.write(archive, out);
        return Response.ok(body).type("application/x-tar").header(HttpHeaders.CONTENT_LENGTH, archive.length())
                .header("Content-Disposition", "attachment; filename=\"" + archive.fileName() + "\"").build();
    }

    @Override
    public Response tinkerSetCheckpointTtl(String trainingRunId, String checkpointKind, String checkpointName,
            ObjectNode body) {
        runs.ttl(trainingRunId, checkpointKind, checkpointName, body);
        return Response.noContent().build();
    }

    @Override
    public Response tinkerListUserCheckpoints(Integer limit, Integer offset) {
        return Response.ok(runs.userCheckpoints(limit, offset)).build();
    }

    @Override
    public Response tinkerListSessions(Integer limit, Integer offset, String accessScope) {
        return Response.ok(runs.sessions(limit, offset, accessScope)).build();
    }

    @Override
    public Response tinkerGetSession(String sessionId, String accessScope) {
        return Response.ok(runs.session(sessionId, accessScope)).build();
    }

    @Override
    public Response tinkerGetSampler(String samplerId) {
        return Response.ok(runs.sampler(samplerId)).build();
    }

    @Override
    public Response tinkerCreateSamplingSession(ObjectNode body) {
        return Response.ok(Map.of("sampling_session_id", sampling.createSession(TinkerInput.body(body)), "type",
                "create_sampling_session")).build();
    }

    @Override
    public Response tinkerSample(ObjectNode body) {
        String id = sampling.sample(TinkerInput.body(body), idempotencyKey());
        // the SDK 0.3x names each sample by the future (its sequence_id); num_samples was checked by sample
        ObjectNode future = JsonNodeFactory.instance.objectNode().put("request_id", id);
        ArrayNode ids = future.putArray("sample_sequence_ids");
        for (int i = 0, n = body.hasNonNull("num_samples") ? body.get("num_samples").asInt() : 1; i < n; i++) {
            ids.add(id + ":" + i);
        }
        return Response.ok(future).build();
    }
}

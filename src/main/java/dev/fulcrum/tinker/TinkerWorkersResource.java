package dev.fulcrum.tinker;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.vertx.core.http.HttpServerRequest;

import dev.fulcrum.accounts.AuthenticatesWithSignedToken;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.tinker.api.TinkerWorkersApi;

/** The worker protocol of Tinker models ({@code openapi/tinker.yaml}, problem+json errors). */
public class TinkerWorkersResource implements TinkerWorkersApi {

    @Inject
    TinkerWorkers workers;

    @Inject
    TinkerSettings settings;

    @Inject
    StoredJson json;

    @Inject
    UsageMeter meter;

    @Context
    HttpHeaders headers;

    @Context
    HttpServerRequest request;

    private String authorization() {
        return headers.getHeaderString(HttpHeaders.AUTHORIZATION);
    }

    @Override
    public Response claimTinkerModel(String workerId, Integer wait, Integer maxModels) {
        // a worker that went away during the long poll (it stopped, its connection closed) is given nothing
        TinkerWorkers.Claim claim = workers.claim(workerId, wait, maxModels, () -> !request.response().closed());
        if (claim == null) {
            return Response.noContent().build();
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("model_id", claim.model().id)
                .put("base_model", claim.model().baseModel).put("attempt", claim.model().attempt)
                .put("token", claim.token()).put("lease_seconds", settings.lease().toSeconds());
        body.set("lora", claim.lora());
        return Response.ok(body, MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response nextTinkerOperation(String tinkerModel, Integer wait) {
        TinkerWorkers.Next next = workers.next(authorization(), tinkerModel, wait);
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("release", next.release());
        if (next.reason() != null) {
            body.put("reason", next.reason());
        }
        if (next.operation() != null) {
            ObjectNode op = body.putObject("operation").put("request_id", next.operation().id)
                    .put("kind", next.operation().kind).put("seq_id", next.operation().seqId);
            op.set("request", json.readObject(next.operation().request));
        }
        return Response.ok(body, MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response finishTinkerOperation(String tinkerModel, String requestId, ObjectNode body) {
        TinkerWorkers.Finished finished = workers.finish(authorization(), tinkerModel, requestId, body);
        if (finished.use() != null) {
            meter.record(finished.use());
        }
        return Response.ok(TinkerWorkers.lease(finished.leaseUntil()), MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response heartbeatTinkerModel(String tinkerModel) {
        return Response.ok(TinkerWorkers.lease(workers.heartbeat(authorization(), tinkerModel)),
                MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response releaseTinkerModel(String tinkerModel, ObjectNode body) {
        return Response.ok(TinkerWorkers.lease(workers.release(authorization(), tinkerModel, body)),
                MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response downloadTinkerFile(String tinkerModel, String requestId, String path) {
        TinkerFile file = workers.loadFile(authorization(), tinkerModel, requestId, path);
        return Response.ok(workers.open(file), MediaType.APPLICATION_OCTET_STREAM_TYPE)
                .header("Content-Length", file.size).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response uploadTinkerFile(String tinkerModel, String requestId, String path, java.io.InputStream body) {
        TinkerFile file = workers.upload(authorization(), tinkerModel, requestId, path, body);
        return Response.ok(JsonNodeFactory.instance.objectNode().put("path", file.path).put("size", file.size)
                .put("digest", file.digest), MediaType.APPLICATION_JSON_TYPE).build();
    }
}

package dev.fulcrum.inference.engine.upstream;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.InferenceFailure.ServerFault;
import dev.fulcrum.inference.catalog.CheckpointExports;

/**
 * Loads a checkpoint's LoRA adapter on one replica of a model server, once (vLLM's runtime LoRA loading: {@code POST
 * {base-url}/load_lora_adapter} with the path the server sees; its "already loaded" answer counts as loaded), and
 * unloads the replica's least recently used adapters beyond {@code fulcrum.inference.routing.adapters-per-replica}
 * ({@code POST {base-url}/unload_lora_adapter}). A failed load is forgotten, so the next request loads again.
 */
final class AdapterLoader {

    private final ObjectMapper json;
    private final RoutingMetrics metrics;
    private final int perReplica;

    AdapterLoader(ObjectMapper json, RoutingMetrics metrics, int perReplica) {
        this.json = json;
        this.metrics = metrics;
        this.perReplica = perReplica;
    }

    /**
     * The adapter's load on the replica, started when it has none. Fails with an {@link InferenceFailure} naming
     * {@code modelId}, with the server's fault: 503 when the server cannot be reached, 504 when it does not answer in
     * time, 502 otherwise.
     */
    CompletableFuture<Void> ensure(String model, Replica replica, CheckpointExports.Export adapter, String modelId) {
        CompletableFuture<Void> load = replica.adapter(adapter.name());
        if (load != null) {
            return load;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        List<String> evicted;
        synchronized (replica) {
            load = replica.adapter(adapter.name());
            if (load != null) {
                return load;
            }
            evicted = replica.loading(adapter.name(), mine, perReplica);
        }
        for (String name : evicted) {
            post(replica, "unload_lora_adapter", Map.of("lora_name", name)).onComplete(done -> metrics.adapter(model,
                    replica, done.succeeded() && done.result().status() < 300 ? "unloaded" : "unload_failed"));
        }
        post(replica, "load_lora_adapter", Map.of("lora_name", adapter.name(), "lora_path", adapter.serverPath()))
                .onComplete(done -> {
                    InferenceFailure failure = null;
                    if (done.failed()) {
                        failure = UpstreamErrors.translate(modelId, done.cause(),
                                "loading the adapter: connection closed");
                    } else if (done.result().status() >= 300) {
                        String message = UpstreamErrors.message(json, done.result().body());
                        message = message == null ? "no message" : message;
                        if (!(done.result().status() == 400 && message.contains("already")
                                && message.contains("loaded"))) {
                            failure = InferenceFailure
                                    .upstreamFailed(modelId,
                                            "loading the adapter " + adapter.name() + " answered status "
                                                    + done.result().status() + ": " + message)
                                    .causedBy(ServerFault.answered(done.result().status()));
                        }
                    }
                    if (failure == null) {
                        metrics.adapter(model, replica, "loaded");
                        mine.complete(null);
                    } else {
                        metrics.adapter(model, replica, "failed");
                        replica.forget(adapter.name(), mine);
                        mine.completeExceptionally(failure);
                    }
                });
        return mine;
    }

    private record Answer(int status, Buffer body) {
    }

    private Future<Answer> post(Replica replica, String path, Map<String, String> body) {
        Buffer bytes;
        try {
            bytes = Buffer.buffer(json.writeValueAsBytes(body));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return replica.server.client().request(replica.server.options(HttpMethod.POST, path, "application/json"))
                .compose(request -> request.send(bytes))
                .compose(response -> response.body().map(answer -> new Answer(response.statusCode(), answer)));
    }
}

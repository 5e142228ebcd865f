package dev.fulcrum.inference.engine.upstream;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.CheckpointExports;
import dev.fulcrum.inference.catalog.Engine;
import dev.fulcrum.platform.OutboundHttp;

/**
 * The catalog's {@code openai-compatible} models, each an {@link OpenAiCompatibleBackend} of its server, and their
 * trained checkpoints as LoRA adapters of that server (vLLM's runtime LoRA loading): the checkpoint's files are
 * exported once ({@link CheckpointExports}), the server is asked once per replica to {@code POST
 * {base-url}/load_lora_adapter} them from the path it sees, and completions go to the server with the adapter's name as
 * {@code model}. Step 0 is the base model itself.
 */
@ApplicationScoped
public class UpstreamEngine implements Engine {

    @Inject
    Vertx vertx;

    @Inject
    OutboundHttp http;

    @Inject
    ObjectMapper json;

    @Inject
    CheckpointExports files;

    /** Adapters loaded (or being loaded) by this replica, by base URL and adapter name. */
    private final Map<String, CompletableFuture<Void>> loaded = new ConcurrentHashMap<>();
    private final Map<String, Served> backends = new ConcurrentHashMap<>();
    private HttpClient client;

    private record Served(CatalogModel upstream, OpenAiCompatibleBackend backend) {
    }

    /** The client of the adapter loads (each request sets its own connect and idle timeouts). */
    private synchronized HttpClient client() {
        if (client == null) {
            client = http.client(Duration.ofSeconds(60), new PoolOptions(), OutboundHttp.Spans.INSTRUMENTED);
        }
        return client;
    }

    @PreDestroy
    synchronized void stop() {
        backends.values().forEach(served -> served.backend().close());
        if (client != null) {
            http.close(client);
        }
    }

    @Override
    public String kind() {
        return CatalogModel.OPENAI_COMPATIBLE;
    }

    @Override
    public Backend serve(CatalogModel model) {
        return new OpenAiCompatibleBackend(http, json,
                new OpenAiCompatibleBackend.Settings(model.baseUrl(), model.apiKey(), model.upstreamModelOrId(),
                        model.connectTimeoutMs(), model.timeoutMs(), model.maxConcurrency(), model.maxQueue(),
                        model.maxTokens()));
    }

    @Override
    public CompletionStage<Backend> checkpoint(CatalogModel base, ServedModel baseServed, Checkpoint checkpoint,
            String modelId) {
        if (checkpoint.step() == 0) { // the untrained checkpoint: the base model as is
            return CompletableFuture.completedFuture(baseServed.backend());
        }
        CheckpointExports.Export adapter = files.export(checkpoint);
        return load(base, adapter, modelId).thenApply(loaded -> served(base, adapter));
    }

    /**
     * Asks the model server to load the adapter, once per replica (a failed load is tried again by the next request);
     * vLLM's "already loaded" answer counts as loaded. Non-blocking. Fails with an {@link InferenceFailure} naming
     * {@code modelId}: 503 when the server cannot be reached, 504 when it does not answer in time, 502 otherwise.
     */
    private CompletionStage<Void> load(CatalogModel upstream, CheckpointExports.Export adapter, String modelId) {
        String key = upstream.baseUrl() + "\n" + adapter.name();
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = loaded.compute(key,
                (k, old) -> old == null || old.isCompletedExceptionally() ? mine : old);
        if (current != mine) {
            return current;
        }
        String base = upstream.baseUrl().endsWith("/") ? upstream.baseUrl() : upstream.baseUrl() + "/";
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setAbsoluteURI(URI.create(base).resolve("load_lora_adapter").toString())
                .setConnectTimeout(upstream.connectTimeoutMs()).setIdleTimeout(upstream.timeoutMs())
                .putHeader("Content-Type", "application/json").putHeader("Accept", "application/json");
        if (upstream.apiKey() != null && !upstream.apiKey().isEmpty()) {
            options.putHeader("Authorization", "Bearer " + upstream.apiKey());
        }
        Buffer body;
        try {
            body = Buffer.buffer(
                    json.writeValueAsBytes(Map.of("lora_name", adapter.name(), "lora_path", adapter.serverPath())));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        client().request(options).compose(request -> request.send(body))
                .compose(response -> response.body().map(answer -> new Answer(response.statusCode(), answer)))
                .onComplete(done -> {
                    InferenceFailure failure = null;
                    if (done.failed()) {
                        failure = UpstreamErrors.translate(modelId, done.cause(),
                                "loading the adapter: connection closed");
                    } else if (done.result().status() >= 300) {
                        String message = message(done.result().body());
                        if (done.result().status() == 400 && message.contains("already")
                                && message.contains("loaded")) {
                            failure = null;
                        } else {
                            failure = InferenceFailure.upstreamFailed(modelId, "loading the adapter " + adapter.name()
                                    + " answered status " + done.result().status() + ": " + message);
                        }
                    }
                    if (failure == null) {
                        mine.complete(null);
                    } else {
                        loaded.remove(key, mine);
                        mine.completeExceptionally(failure);
                    }
                });
        return mine;
    }

    private record Answer(int status, Buffer body) {
    }

    /** The message of an error answer, "no message" when it has none. */
    private String message(Buffer body) {
        String message = UpstreamErrors.message(json, body);
        return message == null ? "no message" : message;
    }

    /**
     * The adapter's backend for one completion. A 404 from the model server means it no longer knows the adapter (it
     * restarted): this replica forgets the load, so the next request loads the adapter again.
     */
    private Backend served(CatalogModel upstream, CheckpointExports.Export adapter) {
        Backend backend = backend(upstream, adapter.name());
        String key = upstream.baseUrl() + "\n" + adapter.name();
        return new Backend() {
            @Override
            public void check(ChatRequest request, String modelId) {
                backend.check(request, modelId);
            }

            @Override
            public void complete(ChatExchange exchange) {
                exchange.whenFinished(outcome -> {
                    if (outcome.status() == 404) {
                        loaded.computeIfPresent(key, (k, load) -> load.isDone() ? null : load);
                    }
                });
                backend.complete(exchange);
            }
        };
    }

    /**
     * The backend answering with the adapter: the upstream's settings, the adapter's name as the upstream model. Kept
     * per adapter (with its connections) while the catalog model does not change.
     */
    private Backend backend(CatalogModel upstream, String adapterName) {
        String key = upstream.id() + "\n" + adapterName;
        Served served = backends.compute(key, (k, old) -> {
            if (old != null && old.upstream().equals(upstream)) {
                return old;
            }
            if (old != null) { // requests still running on the old backend finish first
                vertx.setTimer(Math.max(1, old.upstream().timeoutMs()) + 1000, t -> old.backend().close());
            }
            return new Served(upstream,
                    new OpenAiCompatibleBackend(http, json,
                            new OpenAiCompatibleBackend.Settings(upstream.baseUrl(), upstream.apiKey(), adapterName,
                                    upstream.connectTimeoutMs(), upstream.timeoutMs(), upstream.maxConcurrency(),
                                    upstream.maxQueue())));
        });
        return served.backend();
    }
}

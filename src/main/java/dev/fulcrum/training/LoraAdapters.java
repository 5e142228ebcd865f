package dev.fulcrum.training;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;

import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.CatalogModel;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.GgufBackend;
import dev.fulcrum.inference.GgufQueues;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ModelCatalog;
import dev.fulcrum.inference.OpenAiCompatibleBackend;
import dev.fulcrum.inference.engine.llama.LlamaEngine;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * Checkpoints of models whose base model is an {@code openai-compatible} model of the inference catalog, served as LoRA
 * adapters of that model's server (vLLM's runtime LoRA loading): the checkpoint's files are written once into
 * {@code fulcrum.training.lora.export-dir}/{entity}/{project}/{model}/step{N}-a{version} (a temporary directory renamed
 * into place), the server is asked once per replica to {@code POST {base-url}/load_lora_adapter} them from the same
 * path under {@code fulcrum.training.lora.server-dir}, and completions go to the server with the adapter's name as
 * {@code model}.
 */
@ApplicationScoped
public class LoraAdapters {

    @Inject
    TrainingSettings settings;

    @Inject
    ArtifactVersions artifacts;

    @Inject
    BlobStore blobs;

    @Inject
    ModelCatalog catalog;

    @Inject
    Vertx vertx;

    @Inject
    ObjectMapper json;

    @Inject
    InferenceConfig inference;

    @Inject
    LlamaEngine llama;

    @Inject
    GgufQueues ggufQueues;

    /** GGUF models with a checkpoint's adapter, by base model and adapter name (see {@link #gguf}). */
    private final Map<String, GgufServed> ggufBackends = new ConcurrentHashMap<>();

    private record GgufServed(CatalogModel base, GgufBackend backend) {
    }

    /** Adapters loaded (or being loaded) by this replica, by base URL and adapter name. */
    private final Map<String, CompletableFuture<Void>> loaded = new ConcurrentHashMap<>();
    private final Map<String, Served> backends = new ConcurrentHashMap<>();
    private HttpClient client;

    private record Served(CatalogModel upstream, OpenAiCompatibleBackend backend) {
    }

    /** A checkpoint's adapter: its name on the model server and its directory as Fulcrum and the server see it. */
    record Adapter(String name, Path exported, String serverPath) {
    }

    private synchronized HttpClient client() {
        if (client == null) {
            client = vertx
                    .createHttpClient(new HttpClientOptions().setKeepAlive(true).setDecompressionSupported(false));
        }
        return client;
    }

    @PreDestroy
    synchronized void stop() {
        backends.values().forEach(served -> served.backend().close());
        ggufBackends.values().forEach(served -> served.backend().close());
        if (client != null) {
            client.close();
        }
    }

    /** The catalog model a base model's checkpoints are adapters of, or null when it is no openai-compatible one. */
    CatalogModel upstream(String baseModel) {
        try {
            CatalogModel model = catalog.get(baseModel);
            return CatalogModel.OPENAI_COMPATIBLE.equals(model.backend()) ? model : null;
        } catch (ApiException e) {
            return null;
        }
    }

    /** The catalog model of a base model when it is a GGUF model (served by llama.cpp inside Fulcrum), else null. */
    CatalogModel ggufBase(String baseModel) {
        try {
            CatalogModel model = catalog.get(baseModel);
            return CatalogModel.GGUF.equals(model.backend()) ? model : null;
        } catch (ApiException e) {
            return null;
        }
    }

    /**
     * The backend answering with a checkpoint's GGUF LoRA adapter ({@code adapter_model.gguf}, which the worker writes
     * when its base model is GGUF) applied to the GGUF base model: the engine's one model of the base file with the
     * adapter loaded on it (a context of its own while in use), kept while the catalog model does not change.
     */
    Backend gguf(CatalogModel base, Adapter adapter) {
        Path file = adapter.exported().resolve("adapter_model.gguf");
        if (!Files.isRegularFile(file)) {
            throw InferenceFailure
                    .notFound("The checkpoint has no GGUF adapter (adapter_model.gguf): it was trained by "
                            + "a worker whose base model directory has no model.gguf");
        }
        String key = base.id() + "\n" + adapter.name();
        return ggufBackends.compute(key, (k, old) -> {
            if (old != null && old.base().equals(base)) {
                return old;
            }
            if (old != null) {
                vertx.setTimer(60_000, t -> old.backend().close());
            }
            return new GgufServed(base, new GgufBackend(adapter.name(), base.gguf(), file.toString(), base.maxTokens(),
                    inference.builtin(), llama, ggufQueues));
        }).backend();
    }

    /** The adapter's name: {@code {entity}--{project}--{model}--step{N}-a{version}}, characters vLLM accepts only. */
    static String adapterName(ModelView model, int step, long versionId) {
        String raw = model.entity() + "--" + model.project() + "--" + model.name() + "--step" + step + "-a" + versionId;
        String name = raw.replaceAll("[^A-Za-z0-9._-]", "_");
        if (name.equals(raw)) {
            return name;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
            return name + "-" + HexFormat.of().formatHex(digest, 0, 4); // two raw names cannot share a cleaned one
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes the checkpoint's files into its export directory unless they are there, as the current caller. Blocking:
     * runs on a worker thread.
     */
    Adapter export(ModelView model, int step, long versionId) {
        Path root = settings.lora().exportDir().toAbsolutePath().normalize();
        String leaf = "step" + step + "-a" + versionId;
        Path dir = root.resolve(model.entity()).resolve(model.project()).resolve(model.name()).resolve(leaf)
                .normalize();
        if (!dir.startsWith(root) || dir.getNameCount() != root.getNameCount() + 4) {
            throw InferenceFailure.notFound("The checkpoint's name cannot be a directory name");
        }
        Path relative = root.relativize(dir);
        String serverPath = settings.lora().serverDir().filter(s -> !s.isBlank())
                .map(server -> server.replaceAll("/+$", "") + "/" + relative.toString().replace('\\', '/'))
                .orElse(dir.toString());
        Adapter adapter = new Adapter(adapterName(model, step, versionId), dir, serverPath);
        if (Files.isDirectory(dir)) {
            return adapter;
        }
        VersionView version = artifacts.getVersion(model.entity(), model.project(), model.name(), "step" + step);
        if (version.id() != versionId) {
            throw InferenceFailure.notFound("The checkpoint changed while it was being served; retry");
        }
        try {
            Files.createDirectories(dir.getParent());
            Path temp = Files.createTempDirectory(dir.getParent(), "." + leaf + "-");
            try {
                for (FileView file : version.files()) {
                    Path target = temp.resolve(file.path()).normalize();
                    if (!target.startsWith(temp) || target.equals(temp)) {
                        continue; // artifact paths are relative; nothing is written outside the directory
                    }
                    Files.createDirectories(target.getParent());
                    try (InputStream in = blobs.open(file.digest(), 0, file.size())) {
                        Files.copy(in, target);
                    }
                }
                try {
                    Files.move(temp, dir, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    if (!Files.isDirectory(dir)) { // else another request or replica was first: same files
                        throw e;
                    }
                }
            } finally {
                deleteTree(temp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return adapter;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /**
     * Asks the model server to load the adapter, once per replica (a failed load is tried again by the next request);
     * vLLM's "already loaded" answer counts as loaded. Non-blocking. Fails with an {@link InferenceFailure} naming
     * {@code modelId}: 503 when the server cannot be reached, 504 when it does not answer in time, 502 otherwise.
     */
    CompletionStage<Void> load(CatalogModel upstream, Adapter adapter, String modelId) {
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
                        failure = translate(modelId, done.cause());
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

    private static InferenceFailure translate(String modelId, Throwable cause) {
        if (cause instanceof ConnectTimeoutException || cause instanceof ConnectException) {
            return InferenceFailure.upstreamUnavailable(modelId);
        }
        if (cause instanceof TimeoutException) {
            return InferenceFailure.upstreamTimeout(modelId);
        }
        return InferenceFailure.upstreamFailed(modelId, "loading the adapter: connection closed");
    }

    /** The message of an error answer: OpenAI's {@code error.message}, vLLM's {@code message}, or the text. */
    private String message(Buffer body) {
        try {
            JsonNode root = json.readTree(body.getBytes());
            JsonNode error = root.path("error");
            if (error.path("message").isTextual()) {
                return error.path("message").asText();
            }
            if (root.path("message").isTextual()) {
                return root.path("message").asText();
            }
            if (root.path("detail").isTextual()) {
                return root.path("detail").asText();
            }
        } catch (Exception e) {
            // not JSON: the text itself
        }
        String text = body.toString(StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "no message" : text.substring(0, Math.min(text.length(), 1000));
    }

    /**
     * The adapter's backend for one completion. A 404 from the model server means it no longer knows the adapter (it
     * restarted): this replica forgets the load, so the next request loads the adapter again.
     */
    Backend served(CatalogModel upstream, Adapter adapter) {
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
    Backend backend(CatalogModel upstream, String adapterName) {
        String key = upstream.id() + "\n" + adapterName;
        Served served = backends.compute(key, (k, old) -> {
            if (old != null && old.upstream().equals(upstream)) {
                return old;
            }
            if (old != null) { // requests still running on the old backend finish first
                vertx.setTimer(Math.max(1, old.upstream().timeoutMs()) + 1000, t -> old.backend().close());
            }
            return new Served(upstream,
                    new OpenAiCompatibleBackend(vertx, json,
                            new OpenAiCompatibleBackend.Settings(upstream.baseUrl(), upstream.apiKey(), adapterName,
                                    upstream.connectTimeoutMs(), upstream.timeoutMs(), upstream.maxConcurrency(),
                                    upstream.maxQueue())));
        });
        return served.backend();
    }
}

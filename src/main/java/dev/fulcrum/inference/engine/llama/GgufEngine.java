package dev.fulcrum.inference.engine.llama;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.vertx.core.Vertx;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.CheckpointExports;
import dev.fulcrum.inference.catalog.Engine;

/**
 * The catalog's {@code gguf} models, served by llama.cpp inside Fulcrum ({@link GgufBackend}), and their trained
 * checkpoints: the base model with the checkpoint's GGUF LoRA adapter ({@code adapter_model.gguf}, which
 * {@code fulcrum-worker} writes for a GGUF base) on the engine's one model of the base file; step 0 is the base model
 * itself.
 */
@ApplicationScoped
public class GgufEngine implements Engine {

    /** The file of a checkpoint that holds its GGUF LoRA adapter. */
    static final String ADAPTER = "adapter_model.gguf";

    @Inject
    InferenceConfig config;

    @Inject
    LlamaEngine llama;

    @Inject
    GgufQueues queues;

    @Inject
    CheckpointExports files;

    @Inject
    Vertx vertx;

    /** Backends of checkpoints, by base model and adapter name, kept while the base model does not change. */
    private final Map<String, Served> checkpoints = new ConcurrentHashMap<>();

    private record Served(CatalogModel base, GgufBackend backend) {
    }

    @PreDestroy
    void stop() {
        checkpoints.values().forEach(served -> served.backend().close());
    }

    @Override
    public String kind() {
        return CatalogModel.GGUF;
    }

    @Override
    public Backend serve(CatalogModel model) {
        return new GgufBackend(model.id(), model.gguf(), null, model.maxTokens(), config.builtin(), llama, queues);
    }

    @Override
    public CompletionStage<Backend> checkpoint(CatalogModel base, ServedModel baseServed, Checkpoint checkpoint,
            String modelId) {
        if (checkpoint.step() == 0) {
            return CompletableFuture.completedFuture(baseServed.backend());
        }
        CheckpointExports.Export export = files.export(checkpoint);
        Path file = export.directory().resolve(ADAPTER);
        if (!Files.isRegularFile(file)) {
            throw InferenceFailure.notFound("The checkpoint has no GGUF adapter (" + ADAPTER
                    + "): it was trained by a worker whose base model is not a GGUF file");
        }
        String key = base.id() + "\n" + export.name();
        GgufBackend backend = checkpoints.compute(key, (k, old) -> {
            if (old != null && old.base().equals(base)) {
                return old;
            }
            if (old != null) {
                vertx.setTimer(60_000, t -> old.backend().close());
            }
            return new Served(base, new GgufBackend(export.name(), base.gguf(), file.toString(), base.maxTokens(),
                    config.builtin(), llama, queues));
        }).backend();
        return CompletableFuture.completedFuture(backend);
    }
}

package dev.fulcrum.training;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkus.arc.Arc;
import io.quarkus.arc.ManagedContext;

import dev.fulcrum.accounts.CurrentCaller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.BuiltinBackend;
import dev.fulcrum.inference.BuiltinWorkers;
import dev.fulcrum.inference.CatalogModel;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ModelSource;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.builtin.BuiltinModel;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * Trained checkpoints as chat models: {@code wandb-artifact:///{entity}/{project}/{model}} (the latest checkpoint) or
 * {@code ...:step{N}}, for members of the entity (any role). Checkpoints of built-in models are served by a built-in
 * backend over the checkpoint's weights, kept in a cache bounded by their size (least recently used first out).
 * Checkpoints of a base model that is an {@code openai-compatible} model of the inference catalog are served as LoRA
 * adapters of that model's server ({@link LoraAdapters}); their step 0 is the base model itself.
 */
@ApplicationScoped
public class CheckpointModels implements ModelSource {

    static final String PREFIX = "wandb-artifact:///";
    private static final Pattern ID = Pattern
            .compile("wandb-artifact:///([^/]+)/([^/]+)/([^/:]+)(?::(latest|step(\\d{1,9})))?");

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Inject
    CheckpointFiles checkpointFiles;

    @Inject
    TrainingSettings settings;

    @Inject
    BaseModels baseModels;

    @Inject
    InferenceConfig inference;

    @Inject
    BuiltinWorkers builtinWorkers;

    @Inject
    CurrentCaller current;

    @Inject
    LoraAdapters lora;

    @Inject
    dev.fulcrum.inference.ModelCatalog catalog;

    private final Map<Long, Loaded> cache = new LinkedHashMap<>(16, 0.75f, true);
    private long cachedBytes;
    private ThreadPoolExecutor workers;

    private record Loaded(BuiltinModel model, long bytes) {
    }

    private synchronized ThreadPoolExecutor workers() {
        if (workers == null) {
            int threads = inference.builtin().threads();
            AtomicInteger count = new AtomicInteger();
            workers = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024),
                    task -> {
                        Thread thread = new Thread(task, "checkpoint-model-" + count.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
        }
        return workers;
    }

    @PreDestroy
    synchronized void stop() {
        if (workers != null) {
            workers.shutdownNow();
        }
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id) {
        return CompletableFuture.completedFuture(Optional.empty()); // checkpoints are served to a known caller only
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id, InferenceCaller caller) {
        if (id == null || !id.startsWith(PREFIX)) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Matcher m = ID.matcher(id);
        if (!m.matches()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        CompletableFuture<Optional<ServedModel>> result = new CompletableFuture<>();
        Runnable lookup = () -> {
            ManagedContext context = Arc.container().requestContext();
            context.activate();
            try {
                current.authenticated(caller.caller());
                Integer step = m.group(5) == null ? null : Integer.valueOf(m.group(5));
                serve(id, m.group(1), m.group(2), m.group(3), step).whenComplete((served, failure) -> {
                    if (failure == null) {
                        result.complete(served);
                    } else {
                        result.completeExceptionally(failure instanceof java.util.concurrent.CompletionException wrapped
                                && wrapped.getCause() != null ? wrapped.getCause() : failure);
                    }
                });
            } catch (ApiException e) {
                if (e.kind() == ApiException.Kind.FORBIDDEN) {
                    result.completeExceptionally(InferenceFailure.forbidden(e.getMessage()));
                } else {
                    result.complete(Optional.empty());
                }
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            } finally {
                context.terminate();
            }
        };
        try {
            workers().execute(lookup);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            result.completeExceptionally(InferenceFailure.atCapacity(id));
        }
        return result;
    }

    /** Runs on a worker thread with the caller's request context; only the adapter load completes later. */
    private CompletionStage<Optional<ServedModel>> serve(String id, String entity, String project, String name,
            Integer step) {
        ModelView model = models.byName(entity, project, name);
        models.model(model.id(), Role.VIEWER);
        Checkpoints.Stored checkpoint = checkpoints.stored(model.id(), step).orElse(null);
        if (checkpoint == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        if (baseModels.builtin(model.baseModel())) {
            BuiltinModel weights = weights(model, checkpoint.step(), checkpoint.artifactVersionId());
            return CompletableFuture.completedFuture(Optional.of(new ServedModel(id, model.baseModel(),
                    new BuiltinBackend(() -> weights, builtinWorkers, inference.builtin()))));
        }
        CatalogModel gguf = lora.ggufBase(model.baseModel());
        if (gguf != null) { // llama.cpp inside Fulcrum: the base model with the checkpoint's GGUF adapter
            if (checkpoint.step() == 0) {
                return catalog.find(model.baseModel()).thenApply(
                        base -> base.map(served -> new ServedModel(id, model.baseModel(), served.backend())));
            }
            LoraAdapters.Adapter adapter = lora.export(model, checkpoint.step(), checkpoint.artifactVersionId());
            return CompletableFuture
                    .completedFuture(Optional.of(new ServedModel(id, model.baseModel(), lora.gguf(gguf, adapter))));
        }
        CatalogModel upstream = lora.upstream(model.baseModel());
        if (upstream == null) {
            throw InferenceFailure.notFound("Checkpoints of " + model.baseModel()
                    + " are served as LoRA adapters of the openai-compatible model " + model.baseModel()
                    + " of the inference catalog, and there is none");
        }
        if (checkpoint.step() == 0) { // the untrained checkpoint: the base model as is
            return CompletableFuture.completedFuture(Optional
                    .of(new ServedModel(id, model.baseModel(), lora.backend(upstream, upstream.upstreamModelOrId()))));
        }
        LoraAdapters.Adapter adapter = lora.export(model, checkpoint.step(), checkpoint.artifactVersionId());
        return lora.load(upstream, adapter, id).thenApply(
                loaded -> Optional.of(new ServedModel(id, model.baseModel(), lora.served(upstream, adapter))));
    }

    private BuiltinModel weights(ModelView model, int step, long versionId) {
        synchronized (this) {
            Loaded loaded = cache.get(versionId);
            if (loaded != null) {
                return loaded.model();
            }
        }
        BuiltinModel read = checkpointFiles.builtin(model, step);
        long bytes = read.parameterCount() * Float.BYTES;
        synchronized (this) {
            Loaded previous = cache.put(versionId, new Loaded(read, bytes));
            cachedBytes += bytes - (previous == null ? 0 : previous.bytes());
            Iterator<Map.Entry<Long, Loaded>> oldest = cache.entrySet().iterator();
            while (cachedBytes > settings.checkpointCacheBytes() && cache.size() > 1 && oldest.hasNext()) {
                Map.Entry<Long, Loaded> entry = oldest.next();
                if (entry.getKey() != versionId) {
                    cachedBytes -= entry.getValue().bytes();
                    oldest.remove();
                }
            }
        }
        return read;
    }

    @Override
    public List<ServedModel> listed() {
        return List.of();
    }
}

package dev.fulcrum.inference.engine.builtin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.github.benmanes.caffeine.cache.Cache;

import io.micrometer.core.instrument.MeterRegistry;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.CheckpointExports;
import dev.fulcrum.inference.catalog.Engine;
import dev.fulcrum.platform.Caches;
import dev.fulcrum.tiny.BuiltinModel;

/**
 * The built-in model as the catalog's {@code builtin} models: one backend over the served weights
 * ({@link BuiltinWeights}), and each trained checkpoint a backend over its own weights ({@link BuiltinModel#FILE}),
 * kept in a cache bounded by their size ({@code fulcrum.inference.checkpoints.cache-bytes}, least recently used out).
 * All of them generate on the same threads ({@link BuiltinWorkers}).
 */
@ApplicationScoped
public class BuiltinEngine implements Engine {

    @Inject
    BuiltinWeights weights;

    @Inject
    BuiltinWorkers workers;

    @Inject
    InferenceConfig config;

    @Inject
    CheckpointExports files;

    private BuiltinBackend served;
    /** Served checkpoints' weights by version, up to {@code fulcrum.inference.checkpoints.cache-bytes} of floats. */
    private Cache<Long, BuiltinModel> cache;

    @Inject
    MeterRegistry registry;

    @PostConstruct
    void start() {
        served = new BuiltinBackend(weights::model, workers, config.builtin());
        cache = Caches.weighed(registry, "builtin_checkpoints", config.checkpoints().cacheBytes(),
                (id, model) -> (int) Math.min(Integer.MAX_VALUE, model.parameterCount() * Float.BYTES));
    }

    @Override
    public String kind() {
        return CatalogModel.BUILTIN;
    }

    @Override
    public Backend serve(CatalogModel model) {
        return served;
    }

    @Override
    public CompletionStage<Backend> checkpoint(CatalogModel base, ServedModel baseServed, Checkpoint checkpoint,
            String modelId) {
        BuiltinModel model = weights(checkpoint);
        return CompletableFuture.completedFuture(new BuiltinBackend(() -> model, workers, config.builtin()));
    }

    private BuiltinModel weights(Checkpoint checkpoint) {
        return cache.get(checkpoint.versionId(), id -> {
            try (InputStream in = files.open(checkpoint, BuiltinModel.FILE)) {
                return BuiltinModel.read(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}

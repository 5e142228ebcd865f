package dev.fulcrum.inference.engine.builtin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.CheckpointExports;
import dev.fulcrum.inference.catalog.Engine;
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
    private final Map<Long, Loaded> cache = new LinkedHashMap<>(16, 0.75f, true);
    private long cachedBytes;

    private record Loaded(BuiltinModel model, long bytes) {
    }

    @PostConstruct
    void start() {
        served = new BuiltinBackend(weights::model, workers, config.builtin());
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
        synchronized (this) {
            Loaded loaded = cache.get(checkpoint.versionId());
            if (loaded != null) {
                return loaded.model();
            }
        }
        BuiltinModel read;
        try (InputStream in = files.open(checkpoint, BuiltinModel.FILE)) {
            read = BuiltinModel.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long bytes = read.parameterCount() * Float.BYTES;
        synchronized (this) {
            Loaded previous = cache.put(checkpoint.versionId(), new Loaded(read, bytes));
            cachedBytes += bytes - (previous == null ? 0 : previous.bytes());
            Iterator<Map.Entry<Long, Loaded>> oldest = cache.entrySet().iterator();
            while (cachedBytes > config.checkpoints().cacheBytes() && cache.size() > 1 && oldest.hasNext()) {
                Map.Entry<Long, Loaded> entry = oldest.next();
                if (entry.getKey() != checkpoint.versionId()) {
                    cachedBytes -= entry.getValue().bytes();
                    oldest.remove();
                }
            }
        }
        return read;
    }
}

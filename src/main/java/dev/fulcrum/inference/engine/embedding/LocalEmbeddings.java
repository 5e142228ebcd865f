package dev.fulcrum.inference.engine.embedding;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.ModelSource;

/**
 * The local embedding model ({@code fulcrum.inference.local-embeddings.*}): all-MiniLM-L6-v2 inside Fulcrum, listed as
 * {@code all-minilm-l6-v2} unless configured otherwise, answering {@code /v1/embeddings} with no model server and no
 * download. A model source after the catalog: a catalog model of the same id wins.
 */
@ApplicationScoped
public class LocalEmbeddings implements ModelSource {

    @Inject
    InferenceConfig config;

    private FairExecutor workers;
    private Optional<ServedModel> served = Optional.empty();

    @PostConstruct
    void start() {
        InferenceConfig.LocalEmbeddings settings = config.localEmbeddings();
        if (!settings.enabled()) {
            return;
        }
        workers = new FairExecutor("local-embeddings", settings.threads(), settings.maxQueuedPerProject(),
                settings.maxQueued());
        served = Optional.of(new ServedModel(settings.id(), settings.id(),
                new LocalEmbeddingBackend(new MiniLmEmbedder(), workers)));
    }

    @PreDestroy
    void stop() {
        if (workers != null) {
            workers.shutdownNow();
        }
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id) {
        return CompletableFuture.completedFuture(served.filter(model -> model.id().equals(id)));
    }

    @Override
    public List<ServedModel> listed() {
        return served.map(List::of).orElse(List.of());
    }

    @Override
    public int priority() {
        return 10;
    }
}

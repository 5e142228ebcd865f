package dev.fulcrum.inference.engine.builtin;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceConfig;

/**
 * The threads that generate with the built-in model and its fine-tuned checkpoints
 * ({@code fulcrum.inference.builtin.threads}), shared fairly between projects: each project waits in its own queue of
 * at most {@code fulcrum.inference.builtin.max-queued-per-project} requests (more are answered 429), and a free thread
 * serves the project with the fewest generations running (see {@link FairExecutor}).
 */
@ApplicationScoped
public class BuiltinWorkers {

    @Inject
    InferenceConfig config;

    private FairExecutor executor;

    @PostConstruct
    void start() {
        InferenceConfig.Builtin builtin = config.builtin();
        executor = new FairExecutor("builtin-model", builtin.threads(), builtin.maxQueuedPerProject(),
                builtin.maxQueued());
    }

    @PreDestroy
    void stop() {
        executor.shutdownNow();
    }

    public FairExecutor executor() {
        return executor;
    }
}

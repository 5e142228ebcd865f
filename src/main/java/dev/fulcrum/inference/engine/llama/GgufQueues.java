package dev.fulcrum.inference.engine.llama;

import java.util.HashMap;
import java.util.Map;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;

import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.catalog.CatalogModel;

/**
 * The fair queues of GGUF files: every catalog entry and checkpoint on one file (one base model) takes its turns from
 * one {@link FairExecutor} of {@code parallel} threads, so projects share a base model fairly whichever of its
 * checkpoints they ask for, and the file's CPU is not promised to more generations at once than the base allows. A
 * queue stops when the last backend using it closes.
 */
@ApplicationScoped
public class GgufQueues {

    private final Map<String, Shared> queues = new HashMap<>();

    private static final class Shared {
        final FairExecutor executor;
        int users;

        Shared(FairExecutor executor) {
            this.executor = executor;
        }
    }

    /** The queue of {@code settings}' file (with its thread count), taken by one more backend. */
    synchronized FairExecutor take(CatalogModel.Gguf settings, InferenceConfig.Builtin limits) {
        String key = settings.path() + "\n" + settings.parallel();
        Shared shared = queues.computeIfAbsent(key,
                k -> new Shared(new FairExecutor("gguf-" + Integer.toHexString(k.hashCode()), settings.parallel(),
                        limits.maxQueuedPerProject(), limits.maxQueued())));
        shared.users++;
        return shared.executor;
    }

    @PreDestroy
    synchronized void stop() {
        queues.values().forEach(shared -> shared.executor.shutdownNow());
        queues.clear();
    }

    /** A backend lets go of its queue; the last one stops it (requests still waiting are answered 503). */
    synchronized void release(FairExecutor executor) {
        queues.values().removeIf(shared -> {
            if (shared.executor == executor && --shared.users == 0) {
                executor.shutdownNow();
                return true;
            }
            return false;
        });
    }
}

package dev.fulcrum.training;

import java.math.BigDecimal;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.training.api.model.Check;

/**
 * The training queues as system-check reports them: an executor counts as up when it asked for work within the lease
 * window (the built-in CPU executors of all replicas, the registered GPU workers).
 */
@ApplicationScoped
public class TrainingQueues {

    @Inject
    TrainingSettings settings;

    @Inject
    JobQueue queue;

    public Check cpu() {
        return check("cpu", !settings.builtinBaseModels().isEmpty(), "no built-in CPU executor polled within "
                + settings.lease().toSeconds() + " s (fulcrum.training.cpu-executor is false on every replica?)");
    }

    public Check gpu() {
        boolean configured = settings.workerBaseModels().stream().anyMatch(m -> !"none".equals(m));
        return check("gpu", configured, "no GPU worker claimed work within " + settings.lease().toSeconds() + " s");
    }

    private Check check(String kind, boolean configured, String down) {
        long start = System.nanoTime();
        long depth = queue.depth(kind);
        boolean up = !configured || queue.alive(kind) > 0;
        return new Check().success(up).errors(up ? List.of() : List.of(down)).queueDepth((int) depth)
                .durationMs(BigDecimal.valueOf((System.nanoTime() - start) / 1_000_000L));
    }
}

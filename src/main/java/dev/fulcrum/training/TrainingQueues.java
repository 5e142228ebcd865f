package dev.fulcrum.training;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;

import io.smallrye.health.api.HealthGroup;

import dev.fulcrum.platform.database.DatabaseHealth;

/**
 * The checks of the {@value #GROUP} health group besides the database's ({@link DatabaseHealth} is in it too):
 * {@code api}, and the training queues as {@code /v1/system-check} reports them. An executor counts as up when it asked
 * for work within the lease window (the built-in CPU executors of all replicas, the registered GPU workers). The queues
 * are in this group only, never in readiness: a replica with no GPU worker must stay ready.
 */
@ApplicationScoped
public class TrainingQueues {

    /** The health group {@code /v1/system-check} renders (also served at {@code /q/health/group/system-check}). */
    public static final String GROUP = DatabaseHealth.SYSTEM_CHECK;

    @Inject
    TrainingSettings settings;

    @Inject
    JobQueue queue;

    @Inject
    BaseModels baseModels;

    @Inject
    DatabaseHealth database;

    @Produces
    @HealthGroup(GROUP)
    HealthCheck api() {
        return () -> HealthCheckResponse.up("api");
    }

    @Produces
    @HealthGroup(GROUP)
    HealthCheck cpuQueue() {
        return () -> check("cpu_queue", "cpu", !settings.builtinBaseModels().isEmpty(),
                "no built-in CPU executor polled within " + settings.lease().toSeconds()
                        + " s (fulcrum.training.cpu-executor is false on every replica?)");
    }

    @Produces
    @HealthGroup(GROUP)
    HealthCheck gpuQueue() {
        return () -> check("gpu_queue", "gpu", baseModels.anyWorker(),
                "no GPU worker claimed work within " + settings.lease().toSeconds() + " s");
    }

    private HealthCheckResponse check(String name, String kind, boolean configured, String down) {
        long start = System.nanoTime();
        HealthCheckResponseBuilder response = HealthCheckResponse.named(name);
        // the queues are read from the database: not tried (and not waited for) when it does not answer
        DatabaseHealth.Result reachable = database.check();
        if (!reachable.up()) {
            return response.down().withData("error", "queue unreadable: " + reachable.error()).build();
        }
        try {
            long depth = queue.depth(kind);
            boolean up = !configured || queue.alive(kind) > 0;
            response.status(up).withData("queue_depth", depth);
            if (!up) {
                response.withData("error", down);
            }
        } catch (RuntimeException e) {
            response.down().withData("error", "queue unreadable: " + e.getMessage());
        }
        return response.withData("duration_ms", (System.nanoTime() - start) / 1_000_000L).build();
    }
}

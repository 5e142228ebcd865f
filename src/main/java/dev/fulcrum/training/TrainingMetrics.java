package dev.fulcrum.training;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;

import dev.fulcrum.platform.database.DatabaseGauge;

/**
 * The training metrics (docs/operations.md), labelled by executor kind ({@code cpu}: the built-in executors,
 * {@code gpu}: registered workers) and state, both fixed sets. Step durations are measured between the events of an
 * attempt that reach this replica; the attempts it tracks are those running (a few), forgotten when they end.
 */
@Startup // its meters are on the page from the start, at zero
@ApplicationScoped
public class TrainingMetrics {

    static final List<String> EXECUTORS = List.of("cpu", "gpu");
    private static final List<String> FINISHED = List.of("succeeded", "failed", "cancelled");
    private static final int MAX_TRACKED = 10_000;

    @Inject
    MeterRegistry registry;

    @Inject
    AgroalDataSource dataSource;

    private final Map<String, Counter> started = new ConcurrentHashMap<>();
    private final Map<String, Counter> finished = new ConcurrentHashMap<>();
    private final Map<String, Counter> expiries = new ConcurrentHashMap<>();
    private final Map<String, Timer> steps = new ConcurrentHashMap<>();
    /** Running attempts: job id to its executor kind and the time of its last event. */
    private final Map<String, Clock> running = new ConcurrentHashMap<>();

    private record Clock(String executor, long at) {
    }

    @PostConstruct
    void register() {
        for (String executor : EXECUTORS) {
            started.put(executor,
                    Counter.builder("fulcrum.training.jobs.started")
                            .description("Training attempts claimed by an executor").tag("executor", executor)
                            .register(registry));
            for (String state : FINISHED) {
                finished.put(executor + "/" + state,
                        Counter.builder("fulcrum.training.jobs.finished").description("Training jobs ended, by state")
                                .tag("executor", executor).tag("state", state).register(registry));
            }
            for (String result : List.of("requeued", "failed", "cancelled")) {
                expiries.put(executor + "/" + result, Counter.builder("fulcrum.training.lease.expiries")
                        .description("Running attempts whose executor stopped renewing the lease, by what followed")
                        .tag("executor", executor).tag("result", result).register(registry));
            }
            steps.put(executor, Timer.builder("fulcrum.training.step.duration")
                    .description("Time between two gradient steps of a training attempt").tag("executor", executor)
                    .serviceLevelObjectives(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100),
                            Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
                            Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10),
                            Duration.ofSeconds(30), Duration.ofMinutes(1), Duration.ofMinutes(5))
                    .register(registry));
        }
        DatabaseGauge.register(registry, dataSource, "fulcrum.training.jobs",
                "Training jobs queued (the queue depth) and running, by executor kind", """
                        select executor || '/' || status, count(*) from training_jobs
                        where status in ('queued', 'running') group by 1""", Duration.ofSeconds(5),
                List.of("cpu/queued", "cpu/running", "gpu/queued", "gpu/running"), key -> {
                    String[] parts = key.split("/");
                    return Tags.of("executor", parts[0], "state", parts[1]);
                });
    }

    /** An executor of the kind claimed the job. */
    void claimed(String id, String executor) {
        Counter counter = started.get(executor);
        if (counter != null) {
            counter.increment();
            if (running.size() >= MAX_TRACKED) {
                running.clear();
            }
            running.put(id, new Clock(executor, System.nanoTime()));
        }
    }

    /** An event of a running attempt arrived; a gradient step is timed from the attempt's previous event. */
    void event(String id, String type) {
        Clock last = running.get(id);
        if (last == null) {
            return; // claimed through another replica, or before a restart
        }
        long now = System.nanoTime();
        if (type.equals("gradient_step")) {
            steps.get(last.executor()).record(now - last.at(), TimeUnit.NANOSECONDS);
        }
        running.put(id, new Clock(last.executor(), now));
    }

    /** The job ended in {@code state}; {@code executor} is read only when this replica did not see its claim. */
    void finished(String id, String state, Supplier<String> executor) {
        Clock clock = running.remove(id);
        Counter counter = finished.get((clock != null ? clock.executor() : executor.get()) + "/" + state);
        if (counter != null) {
            counter.increment();
        }
    }

    /** The lease of a running attempt ran out; {@code result}: requeued, failed or cancelled. */
    void leaseExpired(String id, String executor, String result) {
        running.remove(id);
        Counter counter = expiries.get(executor + "/" + result);
        if (counter != null) {
            counter.increment();
        }
    }
}

package dev.fulcrum.training;

import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkus.scheduler.Scheduled;

/**
 * The built-in CPU executor of this replica: claims queued jobs of built-in models one at a time and trains them in
 * process. A second poller renews this executor's presence (what system-check reports) and moves jobs whose lease
 * expired, so both keep running while a job trains.
 */
@ApplicationScoped
public class BuiltinExecutor {

    /** The lease owner of its jobs: the process id tells operators (and the replicas test) which replica runs one. */
    final String owner = "cpu-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();

    @Inject
    TrainingSettings settings;

    @Inject
    JobQueue queue;

    @Inject
    JobRunner runner;

    @Inject
    WorkerUpserts upserts;

    @Scheduled(every = "${fulcrum.training.poll-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void poll() {
        if (!settings.cpuExecutor()) {
            return;
        }
        upserts.seen(owner, "cpu", "built-in CPU executor");
        while (runner.runNext(owner)) {
            upserts.seen(owner, "cpu", "built-in CPU executor");
        }
    }

    @Scheduled(every = "${fulcrum.training.poll-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        if (settings.cpuExecutor()) {
            upserts.seen(owner, "cpu", "built-in CPU executor");
        }
        queue.expireLeases();
    }
}

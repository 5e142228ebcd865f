package dev.fulcrum.training;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.platform.Drain;
import dev.fulcrum.platform.ShutdownSettings;

/**
 * The built-in CPU executor of this replica: claims queued jobs of built-in models one at a time and trains them in
 * process. A second poller renews this executor's presence (what system-check reports) and moves jobs whose lease
 * expired, so both keep running while a job trains.
 * <p>
 * While the replica drains ({@link Drain}) neither poller starts, the job training stops before its next step and is
 * queued again ({@link JobRunner}), and shutdown waits up to {@code fulcrum.shutdown.training-grace} for the pollers
 * under way to end, so that none of them is still using the database when it closes.
 */
@ApplicationScoped
public class BuiltinExecutor {

    private static final Logger LOG = Logger.getLogger(BuiltinExecutor.class);

    /** The lease owner of its jobs: the process id tells operators (and the replicas test) which replica runs one. */
    final String owner = "cpu-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();

    @Inject
    TrainingSettings settings;

    @Inject
    JobQueue queue;

    @Inject
    JobRunner runner;

    @Inject
    WorkerStatements upserts;

    @Inject
    Drain drain;

    @Inject
    ShutdownSettings shutdown;

    /** The pollers under way. */
    private final AtomicInteger underWay = new AtomicInteger();

    @Scheduled(every = "${fulcrum.training.poll-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void poll() {
        if (!settings.cpuExecutor() || !enter()) {
            return;
        }
        try {
            upserts.seen(owner, "cpu", "built-in CPU executor");
            while (!drain.draining() && runner.runNext(owner)) {
                upserts.seen(owner, "cpu", "built-in CPU executor");
            }
        } finally {
            exit();
        }
    }

    @Scheduled(every = "${fulcrum.training.poll-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        if (!enter()) {
            return;
        }
        try {
            if (settings.cpuExecutor()) {
                upserts.seen(owner, "cpu", "built-in CPU executor");
            }
            queue.expireLeases();
        } finally {
            exit();
        }
    }

    /** Waits for the pollers under way (the job training gives its job back at its next step). */
    void stop(@Observes ShutdownEvent event) throws InterruptedException {
        drain.begin();
        long deadline = drain.deadline(shutdown.trainingGrace());
        synchronized (underWay) {
            while (underWay.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warnf("Draining: the built-in executor was still busy after %s; its job is queued again when"
                            + " its lease ends", shutdown.trainingGrace());
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(underWay, left);
            }
        }
    }

    /** Whether a poller may start: not while draining. */
    private boolean enter() {
        if (drain.draining()) {
            return false;
        }
        underWay.incrementAndGet();
        if (drain.draining()) { // the drain began meanwhile; stop() may have seen none under way
            exit();
            return false;
        }
        return true;
    }

    private void exit() {
        if (underWay.decrementAndGet() == 0) {
            synchronized (underWay) {
                underWay.notifyAll();
            }
        }
    }
}

package dev.fulcrum.inference.gateway;

import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.platform.database.JdbcTransactions;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * Requests running per project on all replicas together, at most
 * {@code fulcrum.inference.max-concurrent-requests-per-project}. Each replica leases slots of a project's limit in
 * table {@code inference_slot_leases} (one row per project and replica; a transaction-scoped advisory lock per project
 * keeps the sum of unexpired leases within the limit) and hands them to requests in memory, so most requests cost no
 * database round trip: a replica leases a sixteenth of the limit at a time (at least one slot) and keeps up to that
 * many idle slots for the next requests; idle slots beyond, and all slots idle since the previous renewal, go back at
 * once or at the next renewal. Leases are renewed every third of {@code fulcrum.inference.slot-lease}; those of a
 * replica that died count until they expire. Small limits (under 32) are therefore exact across replicas at the price
 * of a round trip when a request takes or frees a slot; large ones cost a round trip per sixteenth of the limit.
 */
@Singleton
public class ConcurrencyLimits {

    private static final Logger LOG = Logger.getLogger(ConcurrencyLimits.class);
    private static final int LEASE_PARTS = 16;
    /** The advisory lock namespace of slot leases (see platform/database/AdvisoryLocks for the others). */
    private static final int SLOT_LOCKS = 30;

    @Inject
    InferenceConfig config;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    Vertx vertx;

    /** This process among the replicas. */
    final String replica = UUID.randomUUID().toString();

    /** One project's slots on this replica. Guarded by itself. */
    private static final class Slots {
        final String entity;
        final String project;
        /** Slots this replica holds in the database. */
        int held;
        int inUse;
        /** Requests waiting for {@link #leasing} to end, to take a slot. */
        int waiting;
        boolean usedSinceRenewal;
        /** The exchange with the database in flight, if any (one at a time per project). */
        Future<Boolean> leasing;

        Slots(String entity, String project) {
            this.entity = entity;
            this.project = project;
        }
    }

    private final Map<String, Slots> projects = new ConcurrentHashMap<>();

    /** Takes a slot for the project; fails with 429 when all slots of the project are taken on all replicas. */
    public Future<Void> acquire(String entity, String project) {
        Slots slots = projects.computeIfAbsent(entity + "/" + project, k -> new Slots(entity, project));
        return onCallerContext(take(slots));
    }

    private Future<Void> take(Slots slots) {
        Future<Boolean> leasing;
        synchronized (slots) {
            slots.usedSinceRenewal = true;
            if (slots.inUse < slots.held) {
                slots.inUse++;
                return Future.succeededFuture();
            }
            leasing = slots.leasing != null ? slots.leasing : startLease(slots, slots.held + chunk());
            slots.waiting++;
        }
        return leasing.andThen(leased -> {
            synchronized (slots) {
                slots.waiting--;
            }
        }).compose(full -> {
            synchronized (slots) {
                if (slots.inUse < slots.held) {
                    slots.inUse++;
                    return Future.succeededFuture();
                }
            }
            return full ? Future.failedFuture(InferenceFailure.concurrencyLimit()) : take(slots);
        });
    }

    public void release(String entity, String project) {
        Slots slots = projects.get(entity + "/" + project);
        if (slots == null) {
            return;
        }
        synchronized (slots) {
            slots.inUse--;
            int keep = keep(slots);
            if (slots.held > keep && slots.leasing == null) {
                startLease(slots, keep);
            }
        }
    }

    /** The slots worth holding: those in use, those about to be taken, and up to a lease's worth idle. */
    private int keep(Slots slots) {
        return slots.inUse + slots.waiting + chunk() - 1;
    }

    private int chunk() {
        return Math.max(1, config.maxConcurrentRequestsPerProject() / LEASE_PARTS);
    }

    /**
     * Starts the one exchange of the project's slots with the database (holding their lock), asking to hold
     * {@code wanted} slots; completes with whether the project is full: more slots were asked for and none was left on
     * all replicas together.
     */
    private Future<Boolean> startLease(Slots slots, int wanted) {
        int before = slots.held;
        if (wanted < before) {
            slots.held = wanted; // slots going back are no longer handed out (if the update fails, the row holds more)
        }
        // assigned before the exchange starts: its end may come at once, and must find this one to clear
        Promise<Boolean> done = Promise.promise();
        slots.leasing = done.future();
        vertx.<Integer> executeBlocking(() -> lease(slots, before, wanted), false).onComplete(result -> {
            synchronized (slots) {
                slots.leasing = null;
                if (result.failed()) {
                    LOG.warnf("Concurrency slots of %s/%s not leased: %s", slots.entity, slots.project,
                            result.cause().toString());
                } else if (wanted > before) {
                    slots.held = result.result();
                    if (slots.held > keep(slots)) {
                        startLease(slots, keep(slots)); // requests ended meanwhile
                    }
                }
            }
            if (result.failed()) {
                done.fail(new InferenceFailure(Kind.UNAVAILABLE, "Database unavailable", null, null, null));
            } else {
                done.complete(wanted > before && result.result() <= before);
            }
        });
        return done.future();
    }

    /**
     * Sets this replica's lease of the project to {@code wanted} slots, or as many as the limit leaves; the new hold.
     */
    private int lease(Slots slots, int held, int wanted) throws SQLException {
        return JdbcTransactions.run(dataSource, connection -> {
            int granted = wanted;
            if (wanted > held) {
                GatewayStatements.lockSlots(connection, SLOT_LOCKS, slots.entity + "/" + slots.project);
                long others = GatewayStatements.othersHeld(connection, slots.entity, slots.project, replica);
                long free = config.maxConcurrentRequestsPerProject() - others;
                granted = (int) Math.max(held, Math.min(wanted, free));
            }
            GatewayStatements.lease(connection, slots.entity, slots.project, replica, granted,
                    config.slotLease().toMillis() + " milliseconds");
            return granted;
        });
    }

    private long renewedNanos = System.nanoTime();

    /**
     * Every third of {@code fulcrum.inference.slot-lease}: renews this replica's leases, gives back slots idle since
     * the previous renewal, and forgets rows that expired long ago (of replicas that died).
     */
    @Scheduled(every = "1s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void renew() {
        long now = System.nanoTime();
        if (now - renewedNanos < config.slotLease().toNanos() / 3) {
            return;
        }
        renewedNanos = now;
        for (Slots slots : projects.values()) {
            synchronized (slots) {
                if (!slots.usedSinceRenewal && slots.held > slots.inUse && slots.leasing == null) {
                    startLease(slots, slots.inUse);
                }
                slots.usedSinceRenewal = false;
            }
        }
        try {
            NativeSql.pooled(dataSource, connection -> {
                GatewayStatements.renew(connection, replica, config.slotLease().toMillis() + " milliseconds");
                return null;
            });
        } catch (SQLException e) {
            LOG.warnf("Concurrency slot leases not renewed: %s", e.toString());
        }
    }

    /** Gives back this replica's slots when it stops (a crash leaves them counted until they expire). */
    void giveBackAll(@Observes ShutdownEvent stopping) {
        try {
            NativeSql.pooled(dataSource, connection -> {
                GatewayStatements.giveBackAll(connection, replica);
                return null;
            });
        } catch (SQLException | RuntimeException e) {
            LOG.warnf("Concurrency slot leases not given back: %s", e.toString());
        }
    }

    private static <T> Future<T> onCallerContext(Future<T> future) {
        Context context = Vertx.currentContext();
        if (context == null || future.isComplete()) {
            return future;
        }
        Promise<T> here = Promise.promise();
        future.onComplete(result -> context.runOnContext(ignored -> here.handle(result)));
        return here.future();
    }
}

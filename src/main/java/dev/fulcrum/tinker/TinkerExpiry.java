package dev.fulcrum.tinker;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.LockModeType;

import org.hibernate.Timeouts;
import org.jboss.logging.Logger;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.training.Checkpoints;

/**
 * Deletes saved weights whose time to live has passed ({@code ttl_seconds} of a save or a copy, or
 * {@code set_checkpoint_ttl_from_tinker_path}), with the Fulcrum checkpoint holding them, as their owner's delete
 * would; their blobs go when the blob collector finds nothing else using them. Sampling clients on them then fail as on
 * deleted weights. Each replica sweeps on its own: a batch takes its rows with {@code for update skip locked}.
 */
@ApplicationScoped
public class TinkerExpiry {

    private static final Logger LOG = Logger.getLogger(TinkerExpiry.class);
    private static final int BATCH = 100;

    @Inject
    Checkpoints checkpoints;

    @Scheduled(every = "${fulcrum.tinker.sweep-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.warnf("Deleting expired Tinker weights failed: %s", e.toString());
        }
    }

    /** Deletes every saved weights expired by now; answers how many. */
    public int sweep() {
        int total = 0;
        int deleted;
        do {
            deleted = QuarkusTransaction.requiringNew().call(this::batch);
            total += deleted;
        } while (deleted == BATCH);
        return total;
    }

    private int batch() {
        List<TinkerCheckpoint> due = TinkerCheckpoint
                .<TinkerCheckpoint> find("expiresAt < ?1 order by expiresAt", OffsetDateTime.now())
                .withLock(LockModeType.PESSIMISTIC_WRITE)
                .withHint("jakarta.persistence.lock.timeout", Timeouts.SKIP_LOCKED_MILLI).page(0, BATCH).list();
        for (TinkerCheckpoint saved : due) {
            TinkerModel model = TinkerModel.findById(saved.modelId);
            checkpoints.expire(model.trainingModelId, saved.step);
            saved.delete();
            LOG.infof("Deleted the saved weights tinker://%s/%s/%s: they expired at %s", saved.modelId, saved.kind,
                    saved.name, saved.expiresAt);
        }
        return due.size();
    }
}

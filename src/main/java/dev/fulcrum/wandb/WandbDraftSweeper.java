package dev.fulcrum.wandb;

import java.time.Duration;
import java.time.OffsetDateTime;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.platform.database.NativeSql;

/**
 * Removes artifact drafts the SDK created but never committed (its process was killed, the upload failed): a draft
 * older than {@code fulcrum.wandb.draft-max-age} that has no version goes with its announced files. Committed drafts
 * stay (their manifest is the one the SDK downloads). Each replica sweeps on its own; a batch takes its rows with
 * {@code for update skip locked}, so replicas sweeping at once delete disjoint rows and never wait for each other, and
 * a row already deleted by one is simply not found by the other. Multipart uploads of files never completed go the same
 * way, their parts aborted in the blob store. The blobs of uploaded files stay in the blob store, as every blob does
 * (content-addressed, shared by versions).
 */
@ApplicationScoped
public class WandbDraftSweeper {

    private static final Logger LOG = Logger.getLogger(WandbDraftSweeper.class);

    /** Rows per transaction, so a large backlog never holds locks long. */
    static final int BATCH = 500;

    @Inject
    EntityManager em;

    @Inject
    WandbUploads uploads;

    @ConfigProperty(name = "fulcrum.wandb.draft-max-age", defaultValue = "24h")
    Duration maxAge;

    @Scheduled(every = "${fulcrum.wandb.draft-sweep-interval:1h}", delayed = "1m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        int removed = sweep(maxAge);
        if (removed > 0) {
            LOG.infof("Removed %d W&B artifact drafts never committed within %s", removed, maxAge);
        }
    }

    /** How old an uncommitted draft gets before it is swept. */
    public Duration maxAge() {
        return maxAge;
    }

    /**
     * Removes the uncommitted drafts created more than {@code age} ago; answers how many. Multipart uploads started
     * more than {@code age} ago, and those of the drafts removed, are aborted first (their parts leave the blob store).
     */
    public int sweep(Duration age) {
        OffsetDateTime before = OffsetDateTime.now().minus(age);
        int aborted = uploads.sweep(before);
        if (aborted > 0) {
            LOG.infof("Aborted %d multipart uploads of W&B artifact files never completed within %s", aborted, age);
        }
        int total = 0;
        int removed;
        do {
            removed = batch(before);
            total += removed;
        } while (removed == BATCH);
        return total;
    }

    @Transactional
    int batch(OffsetDateTime before) {
        return NativeSql.update(em, """
                delete from wandb_artifact_drafts where id in (
                    select id from wandb_artifact_drafts where version_id is null and created_at < ?1
                    order by id limit ?2 for update skip locked)""", before, BATCH);
    }
}

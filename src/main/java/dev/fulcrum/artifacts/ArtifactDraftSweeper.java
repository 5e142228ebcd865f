package dev.fulcrum.artifacts;

import java.time.Duration;
import java.time.OffsetDateTime;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.quarkus.scheduler.Scheduled;

/**
 * Removes drafts ({@link ArtifactDrafts}) a client created but never committed (its process was killed, the upload
 * failed): a draft older than {@code fulcrum.wandb.draft-max-age} (the W&B door made the only drafts when it was named)
 * that has no version goes with its announced files. Committed drafts stay (their manifest is the one a client
 * downloads). Each replica sweeps on its own; a batch takes its rows with {@code for update skip locked}, so replicas
 * sweeping at once delete disjoint rows and never wait for each other, and a row already deleted by one is simply not
 * found by the other. Multipart uploads of files never completed go the same way, their parts aborted in the blob
 * store. The blobs of uploaded files stay in the blob store, as every blob does (content-addressed, shared by
 * versions), until the blob collector finds nothing using them ({@link DraftBlobReferences}).
 */
@ApplicationScoped
public class ArtifactDraftSweeper {

    private static final Logger LOG = Logger.getLogger(ArtifactDraftSweeper.class);

    @Inject
    DraftStatements statements;

    @Inject
    MultipartUploads uploads;

    @ConfigProperty(name = "fulcrum.wandb.draft-max-age", defaultValue = "24h")
    Duration maxAge;

    @Scheduled(every = "${fulcrum.wandb.draft-sweep-interval:1h}", delayed = "1m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        int removed = sweep(maxAge);
        if (removed > 0) {
            LOG.infof("Removed %d artifact drafts never committed within %s", removed, maxAge);
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
            LOG.infof("Aborted %d multipart uploads of artifact files never completed within %s", aborted, age);
        }
        int total = 0;
        int removed;
        do {
            removed = batch(before);
            total += removed;
        } while (removed == DraftStatements.BATCH);
        return total;
    }

    @Transactional
    int batch(OffsetDateTime before) {
        return statements.deleteStaleDrafts(before);
    }
}

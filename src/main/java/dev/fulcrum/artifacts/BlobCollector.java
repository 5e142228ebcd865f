package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.platform.database.AdvisoryLocks;

/**
 * Removes blobs nothing uses any more: a blob that no {@link BlobReferences} bean reports in use (artifact versions'
 * files, training jobs' checkpoint files, W&B drafts' files and manifests, ...) and that was not written within
 * {@code fulcrum.artifacts.gc-grace} (default 24 hours) leaves the blob store, every
 * {@code fulcrum.artifacts.gc-interval} (default 6 hours), on both stores. {@code fulcrum_blobs_freed_bytes_total}
 * counts the bytes removed.
 * <p>
 * The race with writes: every write of a blob, including one that finds the content already stored, first takes the
 * blob's row of {@code blob_puts} and sets its time ({@link #written}), in the writer's transaction when it has one,
 * and only then looks whether the blob exists. The collector removes a blob in one transaction holding that row's lock:
 * it takes the row, checks its time and the references, removes the blob from the store and the row, then commits. A
 * write that comes first makes the collector see a fresh time (or, in the writer's transaction, wait for its commit and
 * see its reference too); a write that comes second waits for the collector's commit, finds the blob gone and stores it
 * again. Replicas collecting at once take rows with {@code skip locked}. While a backup runs (it holds
 * {@link AdvisoryLocks#BACKUPS} shared), nothing is removed.
 */
@ApplicationScoped
@Startup // its meter is on the page from the start, at zero
public class BlobCollector {

    private static final Logger LOG = Logger.getLogger(BlobCollector.class);

    @Inject
    BlobStore blobs;

    @Inject
    EntityManager em;

    @Inject
    Instance<BlobReferences> references;

    @Inject
    MeterRegistry registry;

    private Counter freed;

    @PostConstruct
    void meters() {
        freed = registry.counter("fulcrum.blobs.freed.bytes");
    }

    @ConfigProperty(name = "fulcrum.artifacts.gc-grace", defaultValue = "24h")
    Duration grace;

    /** What a sweep removed. */
    public record Swept(int blobs, long bytes) {
    }

    @Scheduled(every = "${fulcrum.artifacts.gc-interval:6h}", delayed = "10m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        Swept swept = sweep(grace);
        if (swept.blobs() > 0) {
            LOG.infof("Removed %d blobs (%d bytes) nothing uses any more", swept.blobs(), swept.bytes());
        }
    }

    /** Marks a blob as written now: called by every write before it looks whether the blob exists. */
    public void written(String digest) {
        QuarkusTransaction.joiningExisting().run(() -> BlobStatements.written(em, digest));
    }

    /** Removes the blobs nothing uses that were not written within {@code grace}. */
    public Swept sweep(Duration grace) {
        OffsetDateTime before = OffsetDateTime.now().minus(grace);
        List<BlobStore.Listed> candidates = new ArrayList<>();
        try {
            blobs.list(blob -> {
                if (blob.modified().isBefore(before.toInstant())) {
                    candidates.add(blob);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String uses = BlobStatements.usesQuery(references.stream().map(BlobReferences::uses).toList());
        int removed = 0;
        long bytes = 0;
        for (BlobStore.Listed blob : candidates) {
            if (QuarkusTransaction.requiringNew().call(() -> collect(blob, before, uses))) {
                removed++;
                bytes += blob.size();
                freed.increment(blob.size());
            }
        }
        return new Swept(removed, bytes);
    }

    /** In one transaction: the blob's row locked, unused and old, removed from the store and then the row. */
    private boolean collect(BlobStore.Listed blob, OffsetDateTime before, String uses) {
        if (!BlobStatements.noBackupRunning(em)) {
            return false; // a backup is reading the store: it may need this blob
        }
        BlobStatements.insertPut(em, blob.digest(), blob.modified().atOffset(ZoneOffset.UTC));
        OffsetDateTime lastPut = BlobStatements.lockLastPut(em, blob.digest()).orElse(null);
        if (lastPut == null || !lastPut.isBefore(before)) {
            return false;
        }
        if (uses != null && BlobStatements.used(em, uses, blob.digest())) {
            return false;
        }
        try {
            blobs.delete(blob.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BlobStatements.forget(em, blob.digest());
        return true;
    }
}

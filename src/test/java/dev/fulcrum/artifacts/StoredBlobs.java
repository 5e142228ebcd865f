package dev.fulcrum.artifacts;

import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The blob store as other packages' tests look at it: the blobs an artifact version's files use, whether one is stored,
 * and a sweep of the collector that may remove the blobs given (aged past its grace) and no other.
 */
@ApplicationScoped
public class StoredBlobs {

    @Inject
    FileSystemBlobStore filesystem;

    @Inject
    BlobCollector collector;

    @Inject
    EntityManager em;

    /** The digests of the files of a training model's checkpoint (its artifact version), by path. */
    @SuppressWarnings("unchecked")
    public List<String> checkpointDigests(String trainingModelId, int step) {
        return QuarkusTransaction.requiringNew()
                .call(() -> em
                        .createNativeQuery(
                                """
                                        select f.digest from artifact_files f join training_checkpoints c on c.artifact_version_id = f.version_id
                                        where c.model_id = ?1 and c.step = ?2 order by f.path""")
                        .setParameter(1, trainingModelId).setParameter(2, step).getResultList());
    }

    public boolean stored(String digest) {
        return Files.exists(filesystem.path(digest));
    }

    /** Ages the blobs two hours (in the store and in the collector's table), then sweeps with a grace of one hour. */
    public BlobCollector.Swept sweep(List<String> digests) throws Exception {
        for (String digest : digests) {
            if (stored(digest)) {
                Files.setLastModifiedTime(filesystem.path(digest),
                        FileTime.from(Instant.now().minus(Duration.ofHours(2))));
            }
            QuarkusTransaction.requiringNew().run(() -> em
                    .createNativeQuery("update blob_puts set last_put = now() - interval '2 hours' where digest = ?1")
                    .setParameter(1, digest).executeUpdate());
        }
        return collector.sweep(Duration.ofHours(1));
    }
}

package dev.fulcrum.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The blob collector removes blobs nothing references once older than the grace period, keeps referenced and fresh
 * ones, and never removes a blob that a write is about to reference: a commit racing the sweep keeps its blob.
 */
@QuarkusTest
class BlobCollectorTest {

    @Inject
    BlobChecksums checksums;

    @Inject
    FileSystemBlobStore filesystem;

    @Inject
    BlobCollector collector;

    @Inject
    EntityManager em;

    @Inject
    MeterRegistry registry;

    @Inject
    Fixtures fixtures;

    @Test
    void unusedOldBlobsGoUsedAndFreshOnesStay() throws Exception {
        String unusedText = "unused " + UUID.randomUUID();
        String unused = put(unusedText);
        String fresh = put("fresh " + UUID.randomUUID());
        String used = put("used " + UUID.randomUUID());
        String runFile = put("run file " + UUID.randomUUID());
        long version = newVersion();
        reference(used, version);
        runFile(runFile, version);
        age(unused);
        age(used);
        age(runFile);
        double freed = registry.counter("fulcrum.blobs.freed.bytes").count();

        BlobCollector.Swept swept = collector.sweep(Duration.ofHours(1));

        assertFalse(Files.exists(filesystem.path(unused)));
        assertTrue(Files.exists(filesystem.path(fresh)));
        assertTrue(Files.exists(filesystem.path(used)));
        assertTrue(Files.exists(filesystem.path(runFile)), "a run's file is a use (runs/RunBlobReferences)");
        assertTrue(swept.blobs() >= 1, swept.toString());
        assertTrue(registry.counter("fulcrum.blobs.freed.bytes").count() >= freed + 43, swept.toString());

        // the same content written again is stored again
        assertEquals(unused, put(unusedText));
        assertTrue(Files.exists(filesystem.path(unused)));
    }

    @Test
    void aCommitRacingTheSweepKeepsItsBlob() throws Exception {
        String text = "raced " + UUID.randomUUID();
        String digest = put(text);
        age(digest);
        long version = newVersion();
        CountDownLatch written = new CountDownLatch(1);
        // a writer stores the same content again and, in the same transaction, references it after the sweep started
        CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> QuarkusTransaction.requiringNew().run(() -> {
            try {
                checksums.put(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), 1024);
                written.countDown();
                Thread.sleep(1500);
                reference(digest, version);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }));
        assertTrue(written.await(30, TimeUnit.SECONDS));

        collector.sweep(Duration.ofHours(1));
        commit.get(30, TimeUnit.SECONDS);

        assertTrue(Files.exists(filesystem.path(digest)));
        // referenced now: a later sweep keeps it too, however old
        age(digest);
        collector.sweep(Duration.ofHours(1));
        assertTrue(Files.exists(filesystem.path(digest)));
    }

    private String put(String text) throws Exception {
        return checksums.put(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), 1024).blob().digest();
    }

    /** Written two hours ago, as the store and the collector's table see it. */
    private void age(String digest) throws Exception {
        Files.setLastModifiedTime(filesystem.path(digest), FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        QuarkusTransaction.requiringNew().run(() -> em
                .createNativeQuery("update blob_puts set last_put = now() - interval '2 hours' where digest = ?1")
                .setParameter(1, digest).executeUpdate());
    }

    /** A version (through the REST API) whose files the tests add to. */
    private long newVersion() {
        Account member = fixtures.user("gc");
        ArtifactsClient
                .upload(member, ArtifactsClient.collections(member.name(), "p") + "/c" + UUID.randomUUID(),
                        java.util.Map.of("seed.txt", UUID.randomUUID().toString()), null, "data")
                .then().statusCode(201);
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery("select max(id) from artifact_versions").getSingleResult())
                        .longValue());
    }

    /** A file of the version using the blob. */
    private void reference(String digest, long version) {
        QuarkusTransaction.joiningExisting().run(() -> em
                .createNativeQuery("insert into artifact_files (version_id, path, digest, size) values (?1, ?2, ?3, 1)")
                .setParameter(1, version).setParameter(2, "used-" + UUID.randomUUID()).setParameter(3, digest)
                .executeUpdate());
    }

    /** A file of a run in the version's project using the blob. */
    private void runFile(String digest, long version) {
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("""
                with run as (insert into runs (project_id, name) select c.project_id, ?2 from artifact_versions v
                join artifact_collections c on c.id = v.collection_id where v.id = ?1 returning id)
                insert into run_files (run_id, name, blob, size, md5, content_type)
                select id, 'f.txt', ?3, 1, 'x', 'text/plain' from run""").setParameter(1, version)
                .setParameter(2, "gc-" + UUID.randomUUID().toString().substring(0, 8)).setParameter(3, digest)
                .executeUpdate());
    }
}

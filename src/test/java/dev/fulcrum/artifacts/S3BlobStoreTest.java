package dev.fulcrum.artifacts;

import static dev.fulcrum.artifacts.ArtifactsClient.as;
import static dev.fulcrum.artifacts.ArtifactsClient.collections;
import static dev.fulcrum.artifacts.ArtifactsClient.upload;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import io.quarkus.arc.ClientProxy;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.platform.SmallDisks;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The S3 blob store against S3Proxy, a real S3-compatible server: directly and through the artifacts API. */
@QuarkusTest
@QuarkusTestResource(value = S3ProxyResource.class, restrictToAnnotatedClass = true)
class S3BlobStoreTest {

    /** The part size the S3 store is configured with here: S3's smallest. */
    static final int PART = 5 * 1024 * 1024;

    @Inject
    BlobStore blobs;

    @Inject
    FileSystemBlobStore filesystem;

    @Inject
    BlobCollector collector;

    @Inject
    Fixtures fixtures;

    private static List<String> keys() {
        try (S3Client client = S3ProxyResource.client()) {
            return client.listObjectsV2Paginator(b -> b.bucket(S3ProxyResource.BUCKET)).contents().stream()
                    .map(S3Object::key).toList();
        }
    }

    @Test
    void blobsAreContentAddressedObjectsReadByRange() throws Exception {
        assertInstanceOf(S3BlobStore.class, ClientProxy.unwrap(blobs));
        byte[] content = "content kept in S3".getBytes(StandardCharsets.UTF_8);
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        BlobStore.Blob first = blobs.put(new ByteArrayInputStream(content), 1024);
        BlobStore.Blob second = blobs.put(new ByteArrayInputStream(content), 1024);
        assertEquals(new BlobStore.Blob(digest, content.length), first);
        assertEquals(first, second);
        String key = "blobs/" + digest.substring(0, 2) + "/" + digest.substring(2, 4) + "/" + digest;
        assertEquals(1, keys().stream().filter(key::equals).count());
        assertEquals(content.length, blobs.size(digest).orElseThrow());
        try (InputStream in = blobs.open(digest, 8, 4)) {
            assertArrayEquals("kept".getBytes(StandardCharsets.UTF_8), in.readAllBytes());
        }
        try (InputStream in = blobs.open(digest, 0, 0)) {
            assertEquals(0, in.readAllBytes().length);
        }
        assertFalse(blobs.size("f".repeat(64)).isPresent());

        int before = keys().size();
        assertThrows(BlobStore.TooLarge.class, () -> blobs.put(new ByteArrayInputStream(new byte[2048]), 1024));
        assertEquals(before, keys().size());
    }

    @Test
    void artifactFilesGoToTheBucketAndComeBack() throws Exception {
        Account member = fixtures.user("member");
        String models = collections(member.name(), "s3") + "/resnet";
        String digest = upload(member, models, Map.of("weights.bin", "0123456789"), "{\"store\": \"s3\"}", "model")
                .then().statusCode(201).extract().path("files[0].digest");
        assertTrue(keys().contains("blobs/" + digest.substring(0, 2) + "/" + digest.substring(2, 4) + "/" + digest));
        assertFalse(Files.exists(filesystem.path(digest)));
        String file = models + "/versions/latest/download";
        as(member).queryParam("path", "weights.bin").get(file).then().statusCode(200).header("Content-Length", "10")
                .header("ETag", "\"" + digest + "\"").body(equalTo("0123456789"));
        as(member).queryParam("path", "weights.bin").header("Range", "bytes=3-5").get(file).then().statusCode(206)
                .body(equalTo("345"));
    }

    /**
     * The S3 store hashes an upload into its local spool ({@code <data-dir>/blobs-upload}) before it sends it: a full
     * spool disk (a small tmpfs filled to the last byte) refuses the upload with the artifacts API's 507, sends nothing
     * to the bucket and leaves no spool file; once space is free the same upload goes to the bucket.
     */
    @Test
    void aFullSpoolRefusesTheUploadAndSendsNothing() throws Exception {
        Account member = fixtures.user("spool");
        String models = collections(member.name(), "s3") + "/spooled";
        Path spool = Path.of(ConfigProvider.getConfig().getValue("fulcrum.data-dir", String.class))
                .resolve("blobs-upload");
        List<String> before = keys();
        SmallDisks.mountTmpfs(spool, "1m");
        try {
            Path ballast = SmallDisks.fill(spool);
            upload(member, models, Map.of("weights.bin", "x".repeat(64 * 1024)), null, "model").then().statusCode(507)
                    .contentType("application/problem+json").body("detail", containsString("storage is full"));
            assertEquals(before, keys());
            as(member).get(models).then().statusCode(404);
            try (Stream<Path> files = Files.list(spool)) {
                assertEquals(List.of(ballast), files.toList(), "no spool file left");
            }

            Files.delete(ballast);
            String digest = upload(member, models, Map.of("weights.bin", "x".repeat(64 * 1024)), null, "model").then()
                    .statusCode(201).extract().path("files[0].digest");
            assertTrue(
                    keys().contains("blobs/" + digest.substring(0, 2) + "/" + digest.substring(2, 4) + "/" + digest));
        } finally {
            SmallDisks.unmount(spool);
        }
    }

    @Test
    void blobsAbovePartBytesAreMultipartUploadsAndClientPartsAreJoined() throws Exception {
        byte[] content = new byte[2 * PART + 17];
        new java.util.Random(41).nextBytes(content);
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        assertEquals(new BlobStore.Blob(digest, content.length),
                blobs.put(new ByteArrayInputStream(content), content.length));
        try (InputStream in = blobs.open(digest, 0, content.length)) {
            assertArrayEquals(content, in.readAllBytes());
        }

        // a client's parts, the last first; joined into the same content-addressed blob, nothing staged left
        byte[] other = content.clone();
        other[0] ^= 1;
        String upload = blobs.startParts();
        String md5Last = blobs.putPart(upload, 2, new ByteArrayInputStream(other, PART, other.length - PART),
                other.length - PART);
        assertEquals(HexFormat.of().formatHex(
                MessageDigest.getInstance("MD5").digest(java.util.Arrays.copyOfRange(other, PART, other.length))),
                md5Last);
        blobs.putPart(upload, 1, new ByteArrayInputStream(other, 0, PART), PART);
        BlobStore.Joined joined = blobs.completeParts(upload, 2, other.length, blob -> {
        });
        assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(other)),
                joined.blob().digest());
        assertEquals(java.util.Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(other)),
                joined.md5());
        try (InputStream in = blobs.open(joined.blob().digest(), 0, other.length)) {
            assertArrayEquals(other, in.readAllBytes());
        }
        assertTrue(keys().stream().noneMatch(key -> key.startsWith("blobs/uploads/")));

        // a missing part fails the join; an aborted upload leaves nothing
        String missing = blobs.startParts();
        blobs.putPart(missing, 1, new ByteArrayInputStream(content, 0, PART), PART);
        assertThrows(BlobStore.MissingPart.class, () -> blobs.completeParts(missing, 2, content.length, blob -> {
        }));
        String aborted = blobs.startParts();
        blobs.putPart(aborted, 1, new ByteArrayInputStream(content, 0, 10), 10);
        blobs.abortParts(aborted);
        assertThrows(java.io.IOException.class, () -> blobs.completeParts(aborted, 1, 100, blob -> {
        }));
        assertTrue(keys().stream().noneMatch(key -> key.startsWith("blobs/uploads/")));

        // the collector lists the bucket's blobs (not the staging objects) and removes those nothing uses
        java.util.Map<String, Long> listed = new java.util.HashMap<>();
        blobs.list(blob -> listed.put(blob.digest(), blob.size()));
        assertEquals(other.length, listed.get(joined.blob().digest()));
        Thread.sleep(1100); // S3's times have seconds
        collector.sweep(java.time.Duration.ZERO);
        assertFalse(blobs.size(joined.blob().digest()).isPresent());
        assertFalse(blobs.size(digest).isPresent());
    }
}

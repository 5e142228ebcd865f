package dev.fulcrum.artifacts;

import static dev.fulcrum.artifacts.ArtifactsClient.collections;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * A 50 MB file goes up and comes back down while the server holds none of it in memory: half-way through each transfer
 * the heap (after a full collection) has not grown by anything near the file size. Plain {@link HttpURLConnection}
 * streams both ways; REST Assured would buffer the bodies in this JVM.
 */
@QuarkusTest
class ArtifactLargeFileTest {

    private static final long SIZE = 50L * 1024 * 1024;
    private static final long MEASURE_AT = 40L * 1024 * 1024;
    /**
     * A quarter of the file: buffering it would grow the heap by all of it (40 MiB at the measuring point), while the
     * server's other work (metrics, traces, timers) moves the heap by about 10 MiB on its own.
     */
    private static final long ALLOWED_GROWTH = SIZE / 4;
    private static final int CHUNK = 64 * 1024;

    @Inject
    Fixtures fixtures;

    @Inject
    ObjectMapper json;

    @Test
    void a50MegabyteFileRoundTripsInConstantMemory() throws Exception {
        Account member = fixtures.user("member");
        String models = collections(member.name(), "large") + "/checkpoint";
        String boundary = "large-file-boundary";
        byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nmodel\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII);

        long baseline = usedHeapAfterGc();
        long oldGenBaseline = resetOldGenPeak();
        HttpURLConnection up = open(models + "/versions", member);
        up.setDoOutput(true);
        up.setRequestMethod("POST");
        up.setRequestProperty("Content-Type", "multipart/form-data; boundary=" + boundary);
        up.setFixedLengthStreamingMode(head.length + SIZE + tail.length);
        MessageDigest sent = MessageDigest.getInstance("SHA-256");
        long growthDuringUpload;
        try (OutputStream out = up.getOutputStream()) {
            out.write(head);
            growthDuringUpload = writeContent(out, sent, baseline);
            out.write(tail);
        }
        assertEquals(201, up.getResponseCode());
        JsonNode version;
        try (InputStream in = up.getInputStream()) {
            version = json.readTree(in);
        }
        long oldGenGrowthDuringUpload = oldGenPeak() - oldGenBaseline;
        String digest = HexFormat.of().formatHex(sent.digest());
        assertEquals(digest, version.path("files").path(0).path("digest").asText());
        assertEquals(SIZE, version.path("size").asLong());

        oldGenBaseline = resetOldGenPeak();
        HttpURLConnection down = open(models + "/versions/v0/download?path=big.bin", member);
        assertEquals(200, down.getResponseCode());
        assertEquals(Long.toString(SIZE), down.getHeaderField("Content-Length"));
        assertEquals("\"" + digest + "\"", down.getHeaderField("ETag"));
        MessageDigest received = MessageDigest.getInstance("SHA-256");
        Long growthDuringDownload = null;
        long total = 0;
        try (InputStream in = down.getInputStream()) {
            byte[] buffer = new byte[CHUNK];
            int n;
            while ((n = in.read(buffer)) > 0) {
                received.update(buffer, 0, n);
                total += n;
                if (growthDuringDownload == null && total >= MEASURE_AT) {
                    growthDuringDownload = usedHeapAfterGc() - baseline;
                }
            }
        }
        long oldGenGrowthDuringDownload = oldGenPeak() - oldGenBaseline;
        assertEquals(SIZE, total);
        assertEquals(digest, HexFormat.of().formatHex(received.digest()));
        assertTrue(growthDuringUpload < ALLOWED_GROWTH, "heap grew by " + growthDuringUpload + " bytes during upload");
        assertTrue(growthDuringDownload < ALLOWED_GROWTH,
                "heap grew by " + growthDuringDownload + " bytes during download");
        assertTrue(oldGenGrowthDuringUpload < ALLOWED_GROWTH,
                "old generation peaked " + oldGenGrowthDuringUpload + " bytes higher during upload");
        assertTrue(oldGenGrowthDuringDownload < ALLOWED_GROWTH,
                "old generation peaked " + oldGenGrowthDuringDownload + " bytes higher during download");
    }

    /**
     * Writes SIZE pseudo-random bytes; answers the heap growth measured once, after MEASURE_AT bytes. (The growth may
     * be negative, when the baseline caught garbage: it is measured once all the same, not again for every chunk.)
     */
    private static long writeContent(OutputStream out, MessageDigest digest, long baseline) throws Exception {
        Random random = new Random(42);
        byte[] chunk = new byte[CHUNK];
        Long growth = null;
        for (long written = 0; written < SIZE; written += CHUNK) {
            random.nextBytes(chunk);
            out.write(chunk);
            digest.update(chunk);
            if (growth == null && written + CHUNK >= MEASURE_AT) {
                out.flush();
                growth = usedHeapAfterGc() - baseline;
            }
        }
        return growth;
    }

    private static HttpURLConnection open(String path, Account account) throws Exception {
        HttpURLConnection connection = (HttpURLConnection) URI.create("http://localhost:" + RestAssured.port + path)
                .toURL().openConnection();
        connection.setRequestProperty("Authorization", "Bearer " + account.key());
        return connection;
    }

    private static List<MemoryPoolMXBean> oldGeneration() {
        List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && (p.getName().contains("Old Gen")
                        || p.getName().contains("Tenured") || p.getName().contains("Old Space")))
                .toList();
        assertTrue(!pools.isEmpty(), "no old generation pool among " + ManagementFactory.getMemoryPoolMXBeans());
        return pools;
    }

    /**
     * Collects once, resets the old generation's peak and answers its use (one full collection: what a peak after it
     * counts is what the transfer adds, within {@code ALLOWED_GROWTH}; the heap readings need three).
     */
    private static long resetOldGenPeak() {
        System.gc();
        long used = 0;
        for (MemoryPoolMXBean pool : oldGeneration()) {
            pool.resetPeakUsage();
            used += pool.getUsage().getUsed();
        }
        return used;
    }

    private static long oldGenPeak() {
        return oldGeneration().stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
    }

    /**
     * The heap that stays in use: the least of three readings, each after a full collection. What the server keeps for
     * a transfer (a buffered file) is in all three; what other threads of the application (pollers, usage writers,
     * other requests) happen to hold at one instant is not, and on a loaded machine one reading caught 15 MB of it.
     */
    private static long usedHeapAfterGc() {
        Runtime runtime = Runtime.getRuntime();
        long least = Long.MAX_VALUE;
        for (int reading = 0; reading < 3; reading++) {
            System.gc();
            System.gc();
            least = Math.min(least, runtime.totalMemory() - runtime.freeMemory());
        }
        return least;
    }
}

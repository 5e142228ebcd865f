package dev.fulcrum.platform;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.support.PackagedJar;

/**
 * The packaged application on its embedded PostgreSQL, as a user runs it: killed with SIGKILL it leaves its postmaster
 * orphaned and must still start again on the same data directory; stopped with SIGTERM it stops PostgreSQL too; the
 * data survives both.
 */
class EmbeddedRestartIT {

    private static final Duration READY_WITHIN = Duration.ofSeconds(90);
    private static final Duration STOP_WITHIN = Duration.ofSeconds(30);
    private static final String KEY = "fk_it-bootstrap-key-0123456789";
    private static final String OTHER_KEY = "fk_it-other-key-0123456789";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    private PackagedRuns runs;

    @BeforeEach
    void prepare() throws IOException {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        runs = new PackagedRuns("embedded-restart-it");
    }

    /** Whatever happened, no Fulcrum and no PostgreSQL of this test outlives it. */
    @AfterEach
    void cleanUp() throws IOException {
        runs.close();
    }

    @Test
    void survivesSigkillAndSigtermWithItsData() throws Exception {
        Process first = start(KEY);
        awaitReady(first);
        JsonNode created = post("/v2/admin/it/datasets", KEY,
                "{\"name\":\"Restart Check\",\"rows\":[{\"q\":\"2+2\",\"a\":4},{\"q\":\"3+3\",\"a\":6}]}");
        String objectId = created.get("object_id").asText();
        String digest = created.get("digest").asText();
        assertEquals("restart_check", objectId);
        assertEquals(0, created.get("version_index").asInt());

        first.destroyForcibly();
        assertTrue(first.waitFor(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS), "SIGKILL ends the JVM");
        long orphan = runs.postmasterPid()
                .orElseThrow(() -> new AssertionError("the killed run left no postmaster.pid"));
        assertTrue(alive(orphan), "SIGKILL leaves the postmaster " + orphan + " running");

        // a different bootstrap key on a later start must not replace the first administrator's key
        Process second = start(OTHER_KEY);
        awaitReady(second);
        assertFalse(alive(orphan), "the orphaned postmaster was stopped");
        assertNotEquals(orphan, runs.postmasterPid().orElseThrow(), "a new postmaster runs");
        assertDatasetIsThere(objectId, digest);
        assertEquals(401, get("/v1/health", OTHER_KEY).statusCode(), "the second bootstrap key is ignored");

        second.destroy();
        assertTrue(second.waitFor(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS), "SIGTERM stops Fulcrum in time");
        int exit = second.exitValue();
        assertTrue(exit == 0 || exit == 143, "graceful exit, not " + exit);
        await("a graceful stop stops the embedded PostgreSQL too").atMost(Duration.ofSeconds(10))
                .until(() -> !runs.postmasterPid().map(EmbeddedRestartIT::alive).orElse(false));

        Process third = start(KEY);
        awaitReady(third);
        assertDatasetIsThere(objectId, digest);
        third.destroy();
        assertTrue(third.waitFor(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS));
    }

    private void assertDatasetIsThere(String objectId, String digest) throws Exception {
        HttpResponse<String> read = get("/v2/admin/it/datasets/" + objectId + "/versions/" + digest, KEY);
        assertEquals(200, read.statusCode(), read.body());
        JsonNode version = json.readTree(read.body());
        assertEquals(digest, version.get("digest").asText());
        assertEquals("Restart Check", version.get("name").asText());
        String rowsRef = version.get("rows").asText();
        String table = rowsRef.substring(rowsRef.lastIndexOf('/') + 1);
        HttpResponse<String> rows = get("/v2/admin/it/tables/" + table + "/rows", KEY);
        assertEquals(200, rows.statusCode(), rows.body());
        List<String> lines = rows.body().lines().toList();
        assertEquals(2, lines.size(), rows.body());
        assertEquals(6, json.readTree(lines.get(1)).get("val").get("a").asInt());
    }

    private JsonNode post(String path, String key, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(runs.uri(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return json.readTree(response.body());
    }

    private HttpResponse<String> get(String path, String key) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(runs.uri(path)).timeout(Duration.ofSeconds(30)).GET();
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private Process start(String bootstrapKey) throws IOException {
        return runs.start(PackagedJar.command("-Xmx256m"), Map.of("FULCRUM_BOOTSTRAP_API_KEY", bootstrapKey));
    }

    private void awaitReady(Process process) throws Exception {
        runs.await200(process, "/q/health/ready", READY_WITHIN, http);
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
}

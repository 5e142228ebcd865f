package dev.fulcrum.platform;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.platform.database.EmbeddedDatabase;
import dev.fulcrum.support.PackagedJar;

/**
 * The packaged application stopped as Kubernetes stops a pod (SIGTERM): the startup probe is UP once the embedded
 * database is migrated; after the signal readiness is DOWN and new completions are refused with 503 while the server
 * still serves, a stream under way ends with an error event once its grace is over, the running built-in training job
 * is queued again with no lease (read from the database after the process ended), and the process exits in time.
 */
class GracefulShutdownIT {

    private static final String KEY = "fk_it-shutdown-key-0123456789";
    private static final Duration STARTED_WITHIN = Duration.ofSeconds(90);

    private HttpClient http = client();
    private final ObjectMapper json = new ObjectMapper();
    private PackagedRuns runs;
    private Process fulcrum;

    @BeforeEach
    void prepare() throws IOException {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        runs = new PackagedRuns("graceful-shutdown-it");
    }

    @AfterEach
    void cleanUp() throws IOException {
        runs.close();
    }

    @Test
    void sigtermDrainsStreamsAndHandsTheTrainingJobBack() throws Exception {
        fulcrum = start();
        JsonNode started = awaitStarted();
        assertEquals("UP", check(started, "Database migrated").path("status").asText(), started.toString());
        assertTrue(check(started, "Database migrated").path("data").path("embedded_database").asBoolean(),
                started.toString());
        assertEquals(200, send("GET", "/q/health/ready", null).statusCode());

        try (OpenAiStub stub = new OpenAiStub()) {
            String team = "shutdown-lab";
            assertEquals(201, send("POST", "/api/v1/teams", Map.of("name", team)).statusCode());
            String job = runningTrainingJob(team);
            assertEquals(201,
                    send("POST", "/api/v1/admin/models", Map.of("id", "it-endless", "backend", "openai-compatible",
                            "base_url", stub.baseUrl(), "upstream_model", "endless", "api_key", "x")).statusCode());
            CompletableFuture<String> stream = stream("it-endless");

            long signalled = System.nanoTime();
            fulcrum.destroy(); // SIGTERM
            http = client(); // new connections: the draining server closes each after its answer

            // the server still serves for quarkus.shutdown.delay and while the stream runs, but takes nothing new
            // the signal reaches the drain a moment after Quarkus's own shutdown check: wait for it, briefly
            AtomicReference<HttpResponse<String>> answer = new AtomicReference<>();
            await("the drain's readiness check DOWN").atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        answer.set(send("GET", "/q/health/ready", null));
                        return "DOWN"
                                .equals(check(json.readTree(answer.get().body()), "Draining").path("status").asText());
                    });
            HttpResponse<String> ready = answer.get();
            assertEquals(503, ready.statusCode(), ready.body());
            assertEquals("DOWN", check(json.readTree(ready.body()), "Draining").path("status").asText(), ready.body());
            HttpResponse<String> refused = send("POST", "/v1/chat/completions",
                    Map.of("model", "it-endless", "messages", List.of(Map.of("role", "user", "content", "hi"))));
            assertEquals(503, refused.statusCode(), refused.body());
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
            assertEquals("shutting_down", json.readTree(refused.body()).path("error").path("code").asText());

            // the stream ends with an error event once the 4 s grace is over
            String body = stream.get(20, TimeUnit.SECONDS);
            long endedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled);
            assertTrue(body.contains("\"code\":\"shutting_down\""), body);
            assertTrue(endedAfter >= 3500, "the stream had its grace: " + endedAfter + " ms");

            assertTrue(fulcrum.waitFor(30, TimeUnit.SECONDS), "SIGTERM stops Fulcrum in time");
            int exit = fulcrum.exitValue();
            assertTrue(exit == 0 || exit == 143, "graceful exit, not " + exit);
            String log = runs.lastLog();
            assertTrue(!log.contains("EntityManagerFactory is closed"), "no poller ran into the closed database");

            // the job was handed back: queued, no lease, although its 60 s lease would not have ended yet
            EmbeddedDatabase database = EmbeddedDatabase.start(runs.dataDir().resolve("postgres"), 0, false);
            try (Connection connection = DriverManager.getConnection(database.jdbcUrl());
                    PreparedStatement query = connection.prepareStatement(
                            "select status, lease_owner, lease_until from training_jobs where id = ?")) {
                query.setString(1, job);
                try (ResultSet row = query.executeQuery()) {
                    assertTrue(row.next());
                    assertEquals("queued", row.getString(1));
                    assertNull(row.getString(2));
                    assertNull(row.getObject(3));
                }
            } finally {
                database.stop();
            }
        }
    }

    private static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    private Process start() throws IOException {
        return runs.start(PackagedJar.command("-Xmx256m"), Map.of("FULCRUM_BOOTSTRAP_API_KEY", KEY,
                "QUARKUS_SHUTDOWN_DELAY", "1S", "FULCRUM_SHUTDOWN_STREAM_GRACE", "4S"));
    }

    /** The startup probe's answer once it is 200; before, the server does not even listen. */
    private JsonNode awaitStarted() throws Exception {
        return json.readTree(runs.await200(fulcrum, "/q/health/started", STARTED_WITHIN, http).body());
    }

    private static JsonNode check(JsonNode health, String name) {
        for (JsonNode check : health.path("checks")) {
            if (check.path("name").asText().equals(name)) {
                return check;
            }
        }
        return fail("no check " + name + " in " + health);
    }

    /** An RL job of the built-in model with many steps, once it has made its first one; its id. */
    private String runningTrainingJob(String team) throws Exception {
        HttpResponse<String> model = send("POST", "/v1/preview/models",
                Map.of("entity", team, "project", "agents", "name", "drained", "base_model", "fulcrum-tiny"));
        assertEquals(201, model.statusCode(), model.body());
        List<Object> groups = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            groups.add(Map.of("trajectories",
                    List.of(trajectory("say hi " + i, "hi", 1), trajectory("say hi " + i, "ho", 0)), "exceptions",
                    List.of()));
        }
        HttpResponse<String> created = send("POST", "/v1/preview/training-jobs",
                Map.of("model_id", json.readTree(model.body()).path("id").asText(), "trajectory_groups", groups,
                        "experimental_config", Map.of("epochs", 100, "batch_size", 1)));
        assertEquals(202, created.statusCode(), created.body());
        String job = json.readTree(created.body()).path("id").asText();
        await("the job started training").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> send("GET", "/v1/preview/training-jobs/" + job + "/events?limit=100", null).body()
                        .contains("gradient_step"));
        return job;
    }

    private static Map<String, Object> trajectory(String prompt, String answer, double reward) {
        Map<String, Object> choice = Map.of("finish_reason", "stop", "index", 0, "logprobs",
                Map.of("content", List.of()), "message", Map.of("role", "assistant", "content", answer));
        return Map.of("messages_and_choices", List.of(Map.of("role", "user", "content", prompt), choice), "tools",
                List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    /** A streamed completion, once its answer has begun; the whole body when it ends. */
    private CompletableFuture<String> stream(String model) throws Exception {
        HttpRequest request = request("POST", "/v1/chat/completions",
                Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "go")), "stream", true))
                        .build();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        return CompletableFuture.supplyAsync(() -> {
            try (InputStream in = response.body()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private HttpResponse<String> send(String method, String path, Object body) throws Exception {
        return http.send(request(method, path, body).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String method, String path, Object body) throws IOException {
        HttpRequest.Builder request = HttpRequest.newBuilder(runs.uri(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + KEY);
        if (body == null) {
            return request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return request.header("Content-Type", "application/json").method(method,
                HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body)));
    }
}

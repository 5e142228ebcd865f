package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.quarkus.arc.Arc;
import io.quarkus.arc.ManagedContext;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.training.JobQueue;

/**
 * A replica that drains, as SIGTERM makes it ({@link Drain#begin()}, which Quarkus's shutdown calls first): it takes
 * nothing new, readiness is DOWN, and what it holds finishes within its grace or is handed back to the other replicas
 * at once. An application of its own (the drain cannot be undone), with graces of 2 s for webhooks and 3 s for streams.
 */
@QuarkusTest
@TestProfile(DrainTest.Graces.class)
class DrainTest {

    /** Short graces; webhook attempts may take 20 s, so that only the drain ends the slow one. */
    public static class Graces implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("fulcrum.shutdown.stream-grace", "3S", "fulcrum.shutdown.webhook-grace", "2S",
                    "fulcrum.shutdown.training-grace", "10S", "fulcrum.webhooks.request-timeout", "20S",
                    "fulcrum.webhooks.lease", "30S");
        }
    }

    private static final Duration WITHIN = Duration.ofSeconds(20);

    @Inject
    Drain drain;

    @Inject
    Fixtures fixtures;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    JobQueue jobs;

    @Inject
    EntityManager em;

    @TestHTTPResource("/")
    URI base;

    @Test
    void aDrainingReplicaFinishesOrHandsBackWhatItHoldsAndTakesNothingNew() throws Exception {
        given().get("/q/health/ready").then().statusCode(200).body("checks.find { it.name == 'Draining' }.status",
                equalTo("UP"));
        Account admin = fixtures.user("admin");
        PlatformEntity team = fixtures.team("lab", admin);
        try (Receiver receiver = new Receiver();
                OpenAiStub stub = new OpenAiStub()) {
            // under way when the drain begins: a training job, two webhook attempts and two streams
            String job = runningTrainingJob(admin, team.name);
            upstreamModel("drain-trickle", stub, "trickle");
            upstreamModel("drain-endless", stub, "endless");
            CountDownLatch upstreamClosed = new CountDownLatch(1);
            stub.closedConnections = upstreamClosed;
            long quick = delivery(admin, team, receiver.url("/quick"));
            long slow = delivery(admin, team, receiver.url("/slow"));
            await("both attempts under way").atMost(WITHIN)
                    .until(() -> receiver.received.containsAll(Set.of("/quick", "/slow")));
            CompletableFuture<String> trickle = stream(admin, "drain-trickle");
            CompletableFuture<String> endless = stream(admin, "drain-endless");

            long drainedAt = System.nanoTime();
            drain.begin();

            // nothing new: readiness DOWN, new completions refused with a retry hint, the startup probe unchanged
            given().get("/q/health/ready").then().statusCode(503)
                    .body("checks.find { it.name == 'Draining' }.status", equalTo("DOWN"))
                    .body("checks.find { it.name == 'Draining' }.data.since", notNullValue())
                    .body("checks.find { it.name == 'Database' }.status", equalTo("UP"));
            given().get("/q/health/started").then().statusCode(200).body("status", equalTo("UP"))
                    .body("checks.find { it.name == 'Database migrated' }.status", equalTo("UP"));
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("model", "drain-trickle", "messages", List.of(Map.of("role", "user", "content", "hi")),
                            "stream", true))
                    .post("/v1/chat/completions").then().statusCode(503).header("Retry-After", "1")
                    .body("error.code", equalTo("shutting_down")).body("error.type", equalTo("server_error"));

            // a stream that ends within the grace ends as usual
            String trickled = trickle.get(10, TimeUnit.SECONDS);
            assertTrue(trickled.contains(OpenAiStub.PIECES.get(2)), trickled);
            assertTrue(trickled.endsWith("data: [DONE]\n\n"), trickled);
            assertFalse(trickled.contains("shutting_down"), trickled);
            // one still running after the grace ends with an error event, and its upstream request is cancelled
            String cut = endless.get(10, TimeUnit.SECONDS);
            long cutAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainedAt);
            assertTrue(cutAfter >= 2900 && cutAfter < 8000, "cut after the 3 s grace: " + cutAfter + " ms");
            assertTrue(cut.contains("\"code\":\"shutting_down\""), cut);
            assertTrue(upstreamClosed.await(10, TimeUnit.SECONDS), "the upstream request was reset");

            // the quick attempt finished and its outcome was written
            await("the quick delivery succeeded").atMost(WITHIN)
                    .until(() -> "succeeded".equals(delivery(quick).get("state")));
            // the slow one, still under way after the 2 s grace, was released: due now for any replica, not counted
            Map<String, Object> released = await("the slow delivery released").atMost(WITHIN)
                    .until(() -> delivery(slow), row -> row.get("leased_until") == null);
            assertEquals("pending", released.get("state"));
            assertEquals(true, released.get("due"));
            assertEquals(0, ((Number) released.get("attempts")).intValue());
            assertEquals(0L,
                    ((Number) QuarkusTransaction.requiringNew()
                            .call(() -> em
                                    .createNativeQuery("select count(*) from webhook_attempts where delivery_id = ?1")
                                    .setParameter(1, slow).getSingleResult())).longValue());

            // the training job stopped at its next step and is queued again, with no lease: any replica claims it now
            Map<String, Object> requeued = await("the training job queued again").atMost(WITHIN)
                    .until(() -> trainingJob(job), row -> "queued".equals(row.get("status")));
            assertNull(requeued.get("lease_owner"));
            assertNull(requeued.get("lease_until"));
            assertEquals(1, ((Number) requeued.get("attempts")).intValue());
            JobQueue.Claimed claimed = inRequestContext(() -> jobs.claim("cpu", "cpu-other-replica", null));
            assertNotNull(claimed, "claimable at once");
            assertEquals(job, claimed.id());
            assertEquals(2, claimed.attempt());
        }
    }

    /** Queues a delivery to {@code url} through a new webhook of the team; its id. */
    private long delivery(Account admin, PlatformEntity team, String url) {
        long webhook = given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                .body(Map.of("name", Fixtures.unique("hook"), "url", url))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                .getLong("id");
        return QuarkusTransaction.requiringNew().call(() -> deliveries.enqueue(webhook, null, null, "{\"drain\":1}"));
    }

    /** The delivery's row: state, attempts, leased_until, and whether it is due (what a claim takes). */
    private Map<String, Object> delivery(long id) {
        Object[] row = QuarkusTransaction.requiringNew().call(() -> (Object[]) em.createNativeQuery("""
                select state, attempts, leased_until, next_attempt_at <= now() from webhook_deliveries where id = ?1""")
                .setParameter(1, id).getSingleResult());
        Map<String, Object> values = new HashMap<>();
        values.put("state", row[0]);
        values.put("attempts", row[1]);
        values.put("leased_until", row[2]);
        values.put("due", row[3]);
        return values;
    }

    private Map<String, Object> trainingJob(String id) {
        Object[] row = QuarkusTransaction.requiringNew().call(() -> (Object[]) em.createNativeQuery("""
                select status, lease_owner, lease_until, attempts from training_jobs where id = ?1""")
                .setParameter(1, id).getSingleResult());
        Map<String, Object> values = new HashMap<>();
        values.put("status", row[0]);
        values.put("lease_owner", row[1]);
        values.put("lease_until", row[2]);
        values.put("attempts", row[3]);
        return values;
    }

    private static void upstreamModel(String id, OpenAiStub stub, String upstreamModel) {
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .body(new JsonObject().put("id", id).put("backend", "openai-compatible").put("base_url", stub.baseUrl())
                        .put("upstream_model", upstreamModel).put("api_key", "upstream-secret").encode())
                .post("/api/v1/admin/models").then().statusCode(201);
    }

    /** A streamed completion, once its answer has begun; the whole body when it ends. */
    private CompletableFuture<String> stream(Account account, String model) throws Exception {
        String body = new JsonObject().put("model", model)
                .put("messages", List.of(Map.of("role", "user", "content", "go"))).put("stream", true).encode();
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                .header("Authorization", "Bearer " + account.key()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<InputStream> response = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                .send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        return CompletableFuture.supplyAsync(() -> {
            try (InputStream in = response.body()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** An RL job of the built-in model with many steps, once it has made its first one. */
    private String runningTrainingJob(Account account, String team) {
        String model = given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(account.key())
                .body(Map.of("entity", team, "project", "agents", "name", "drained", "base_model", "fulcrum-tiny"))
                .post("/v1/preview/models").then().statusCode(201).extract().path("id");
        List<Map<String, Object>> groups = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            groups.add(Map.of("trajectories",
                    List.of(trajectory("say hi " + i, "hi", 1), trajectory("say hi " + i, "ho", 0)), "exceptions",
                    List.of()));
        }
        String job = given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(account.key())
                .body(Map.of("model_id", model, "trajectory_groups", groups, "experimental_config",
                        Map.of("epochs", 100, "batch_size", 1)))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        await("the job trains").atMost(Duration.ofSeconds(60))
                .until(() -> QuarkusTransaction.requiringNew()
                        .call(() -> ((Number) em.createNativeQuery(
                                "select count(*) from training_job_events where job_id = ?1 and type = 'gradient_step'")
                                .setParameter(1, job).getSingleResult()).longValue()) > 0);
        return job;
    }

    private static Map<String, Object> trajectory(String prompt, String answer, double reward) {
        Map<String, Object> choice = Map.of("finish_reason", "stop", "index", 0, "logprobs",
                Map.of("content", List.of()), "message", Map.of("role", "assistant", "content", answer));
        return Map.of("messages_and_choices", List.of(Map.of("role", "user", "content", prompt), choice), "tools",
                List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    private static <T> T inRequestContext(Supplier<T> action) {
        ManagedContext context = Arc.container().requestContext();
        if (context.isActive()) {
            return action.get();
        }
        context.activate();
        try {
            return action.get();
        } finally {
            context.terminate();
        }
    }

    /** A webhook endpoint on loopback: {@code /quick} answers after 1.5 s, every other path after 60 s. */
    private static final class Receiver implements AutoCloseable {
        final Set<String> received = ConcurrentHashMap.newKeySet();
        private final HttpServer server;
        private final ExecutorService executor = Executors.newCachedThreadPool();

        Receiver() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.setExecutor(executor);
            server.createContext("/", exchange -> {
                try (exchange) {
                    exchange.getRequestBody().readAllBytes();
                    String path = exchange.getRequestURI().getPath();
                    received.add(path);
                    // a receiver slower than the drain's grace (2 s in tests) is what is tested, not a wait
                    Thread.sleep(path.equals("/quick") ? 1500 : 60_000);
                    exchange.sendResponseHeaders(200, -1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            server.start();
        }

        String url(String path) {
            return "http://127.0.0.1:" + server.getAddress().getPort() + path;
        }

        @Override
        public void close() {
            server.stop(0);
            executor.shutdownNow();
        }
    }
}

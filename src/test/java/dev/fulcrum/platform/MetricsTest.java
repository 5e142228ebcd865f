package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PrometheusText;

/**
 * {@code /q/metrics}: a page in the Prometheus text format, whose counters move when what they count happens (a webhook
 * delivery, an inference request through a real upstream, a training job, a dataset read).
 */
@QuarkusTest
class MetricsTest {

    static final Duration WITHIN = Duration.ofSeconds(60);

    @Inject
    Fixtures fixtures;

    @Inject
    WebhookDeliveries deliveries;

    static PrometheusText metrics() {
        String page = given().accept("text/plain; version=0.0.4").when().get("/q/metrics").then().statusCode(200)
                .contentType(startsWith("text/plain")).extract().asString();
        return PrometheusText.parse(page);
    }

    /** Reads the page until {@code condition} holds, failing after {@link #WITHIN}. */
    static PrometheusText awaitMetrics(String what, Predicate<PrometheusText> condition) {
        long deadline = System.nanoTime() + WITHIN.toNanos();
        PrometheusText text = metrics();
        while (!condition.test(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Metrics never showed " + what);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            text = metrics();
        }
        return text;
    }

    @Test
    void theMetricsPageIsPrometheusTextWithTheExtensionsAndFulcrumsFamilies() {
        given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).when()
                .get("/v2/admin/metrics-missing/datasets/nothing/versions/latest").then().statusCode(404);
        PrometheusText text = metrics();
        assertFalse(text.samples().isEmpty());
        for (String family : List.of("http_server_requests_seconds", "agroal_active_count",
                "fulcrum_webhook_deliveries_total", "fulcrum_webhook_attempts_total",
                "fulcrum_webhook_attempt_duration_seconds", "fulcrum_webhook_delivery_latency_seconds",
                "fulcrum_webhook_queue_depth", "fulcrum_webhooks_disabled_total", "fulcrum_inference_refusals_total",
                "fulcrum_inference_in_flight", "fulcrum_training_jobs", "fulcrum_training_jobs_started_total",
                "fulcrum_training_jobs_finished_total", "fulcrum_training_lease_expiries_total",
                "fulcrum_training_step_duration_seconds", "fulcrum_dataset_reads_total")) {
            assertNotNull(text.type(family), "family " + family);
        }
        assertTrue(text.samples().stream().anyMatch(s -> s.name().startsWith("hibernate_")), "Hibernate metrics");
        for (String state : List.of("due", "leased", "waiting_retry")) {
            assertEquals(1, text.samples("fulcrum_webhook_queue_depth", Map.of("state", state)).size(), state);
        }
        // the server's request metrics name the path template, never the path as requested
        assertTrue(
                text.samples("http_server_requests_seconds_count", Map.of()).stream().anyMatch(
                        s -> s.labels().get("uri").startsWith("/v2/{") && s.labels().get("uri").endsWith("}")),
                "templated paths");
        assertTrue(text.samples().stream()
                .noneMatch(s -> String.valueOf(s.labels().get("uri")).contains("metrics-missing")));
    }

    @Test
    void everyFulcrumMetricTheDocsAndTheDashboardNameIsOnThePage() throws IOException {
        // a model's meters exist from its first request: one streamed answer and one upstream failure
        try (OpenAiStub stub = new OpenAiStub()) {
            Account user = fixtures.user("metrics");
            for (String upstream : List.of("echo", "server-error")) {
                String model = Fixtures.unique("metrics/" + upstream);
                given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                        .oauth2(EmbeddedPostgresResource.ADMIN_KEY).body(Map.of("id", model, "backend",
                                "openai-compatible", "base_url", stub.baseUrl(), "upstream_model", upstream))
                        .post("/api/v1/admin/models").then().statusCode(201);
                given().contentType(ContentType.JSON).auth().oauth2(user.key())
                        .body(Map.of("model", model, "stream", true, "messages",
                                List.of(Map.of("role", "user", "content", "Hi"))))
                        .post("/v1/chat/completions").then().statusCode(upstream.equals("echo") ? 200 : 502);
            }
        }
        PrometheusText text = metrics();
        Pattern name = Pattern.compile("fulcrum_[a-z_]+");
        for (String file : List.of("docs/operations.md", "docs/grafana/fulcrum.json")) {
            Matcher names = name.matcher(Files.readString(Path.of(file)));
            int found = 0;
            while (names.find()) {
                String family = names.group().replaceAll("_(bucket|sum|count)$", "");
                assertTrue(text.type(family) != null || text.type(family.replaceAll("_total$", "")) != null,
                        file + " names " + names.group() + ", which is not on the page");
                found++;
            }
            assertTrue(found > 20, file);
        }
    }

    @Test
    void pathsThatMatchNoRouteShareOneLabelValue() {
        for (int i = 0; i < 3; i++) {
            given().when().get("/no-such-route/" + UUID.randomUUID()).then().statusCode(404);
        }
        PrometheusText text = metrics();
        assertTrue(text.samples().stream().noneMatch(s -> String.valueOf(s.labels().get("uri")).contains("no-such")),
                "an unmatched path is not a label value");
        assertTrue(text.sum("http_server_requests_seconds_count", Map.of("status", "404")) >= 3);
    }

    @Test
    void datasetReadsCountCacheHitsAndMisses() {
        Map<String, String> hit = Map.of("cache", "hit");
        Map<String, String> miss = Map.of("cache", "miss");
        PrometheusText before = metrics();
        String project = Fixtures.unique("metrics");
        given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .contentType(ContentType.JSON).body(Map.of("name", "Counted", "rows", List.of(Map.of("q", "a"))))
                .post("/v2/admin/" + project + "/datasets").then().statusCode(200);
        for (int i = 0; i < 3; i++) {
            given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .get("/v2/admin/" + project + "/datasets/counted/versions/latest").then().statusCode(200);
        }
        PrometheusText after = metrics();
        assertEquals(1,
                after.sum("fulcrum_dataset_reads_total", miss) - before.sum("fulcrum_dataset_reads_total", miss));
        assertEquals(2, after.sum("fulcrum_dataset_reads_total", hit) - before.sum("fulcrum_dataset_reads_total", hit));
    }

    @Test
    void anInferenceRequestIsCountedWithItsModelStatusTokensAndTimes() {
        try (OpenAiStub stub = new OpenAiStub()) {
            String model = Fixtures.unique("metrics/echo");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .body(Map.of("id", model, "backend", "openai-compatible", "base_url", stub.baseUrl(),
                            "upstream_model", "echo", "api_key", "upstream-secret"))
                    .post("/api/v1/admin/models").then().statusCode(201);
            Account user = fixtures.user("metrics");
            Map<String, String> ofModel = Map.of("model", model);
            for (boolean stream : List.of(false, true)) {
                given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                        .body(Map.of("model", model, "stream", stream, "messages",
                                List.of(Map.of("role", "user", "content", "Hi"))))
                        .post("/v1/chat/completions").then().statusCode(200);
            }
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                    .body(Map.of("model", model.replace("echo", "missing"), "messages",
                            List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(404);

            PrometheusText text = awaitMetrics("two requests of " + model,
                    t -> t.sum("fulcrum_inference_requests_total", ofModel) == 2);
            assertEquals(2, text.sum("fulcrum_inference_requests_total", Map.of("model", model, "status", "200")));
            assertTrue(text.sum("fulcrum_inference_prompt_tokens_total", ofModel) > 11);
            assertTrue(text.sum("fulcrum_inference_completion_tokens_total", ofModel) > 5);
            assertEquals(2, text.sum("fulcrum_inference_request_duration_seconds_count", ofModel));
            assertEquals(2, text.sum("fulcrum_inference_added_time_seconds_count", ofModel));
            assertEquals(1, text.sum("fulcrum_inference_time_to_first_token_seconds_count", ofModel));
            assertEquals(0, text.sum("fulcrum_inference_in_flight", Map.of()));
            assertEquals("histogram", text.type("fulcrum_inference_request_duration_seconds"));
            assertTrue(
                    text.samples().stream()
                            .noneMatch(s -> model.replace("echo", "missing").equals(s.labels().get("model"))),
                    "a model outside the catalog is no label value");
        }
    }

    @Test
    void anUpstreamFailureIsCountedByKind() {
        try (OpenAiStub stub = new OpenAiStub()) {
            String model = Fixtures.unique("metrics/failing");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY).body(Map.of("id", model, "backend", "openai-compatible",
                            "base_url", stub.baseUrl(), "upstream_model", "server-error"))
                    .post("/api/v1/admin/models").then().statusCode(201);
            Account user = fixtures.user("metrics");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                    .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(502);
            PrometheusText text = awaitMetrics("the upstream error of " + model,
                    t -> t.sum("fulcrum_inference_upstream_errors_total",
                            Map.of("model", model, "kind", "bad_response")) == 1);
            assertEquals(1, text.sum("fulcrum_inference_requests_total", Map.of("model", model, "status", "502")));
        }
    }

    @Test
    void webhookDeliveriesAttemptsAndA410AreCounted() throws IOException {
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(exchange.getRequestURI().getPath().equals("/gone") ? 410 : 204, -1);
            exchange.close();
        });
        receiver.start();
        try {
            Account admin = fixtures.user("admin");
            PlatformEntity team = fixtures.team("metrics", admin);
            String base = "http://127.0.0.1:" + receiver.getAddress().getPort();
            long ok = webhook(admin, team, base + "/ok");
            long gone = webhook(admin, team, base + "/gone");
            PrometheusText before = metrics();
            QuarkusTransaction.requiringNew().run(() -> {
                deliveries.enqueue(ok, null, null, "{\"n\":1}");
                deliveries.enqueue(ok, null, null, "{\"n\":2}");
                deliveries.enqueue(gone, null, null, "{\"n\":3}");
            });
            Map<String, String> delivered = Map.of("outcome", "delivered");
            Map<String, String> failed = Map.of("outcome", "failed");
            PrometheusText after = awaitMetrics("two deliveries and one failure",
                    t -> t.sum("fulcrum_webhook_deliveries_total", delivered)
                            - before.sum("fulcrum_webhook_deliveries_total", delivered) >= 2
                            && t.sum("fulcrum_webhook_deliveries_total", failed)
                                    - before.sum("fulcrum_webhook_deliveries_total", failed) >= 1
                            // an attempt is counted just after its delivery's outcome
                            && t.sum("fulcrum_webhook_attempt_duration_seconds_count", Map.of())
                                    - before.sum("fulcrum_webhook_attempt_duration_seconds_count", Map.of()) >= 3);
            assertEquals(2, delta(before, after, "fulcrum_webhook_attempts_total", Map.of("result", "2xx")));
            assertEquals(1, delta(before, after, "fulcrum_webhook_attempts_total", Map.of("result", "4xx")));
            assertEquals(3, delta(before, after, "fulcrum_webhook_attempt_duration_seconds_count", Map.of()));
            assertEquals(2, delta(before, after, "fulcrum_webhook_delivery_latency_seconds_count", Map.of()));
            assertEquals(1, delta(before, after, "fulcrum_webhooks_disabled_total", Map.of("reason", "gone")));
        } finally {
            receiver.stop(0);
        }
    }

    private static long webhook(Account admin, PlatformEntity team, String url) {
        return given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                .body(Map.of("name", Fixtures.unique("hook"), "url", url))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                .getLong("id");
    }

    @Test
    void aTrainingJobIsCountedFromClaimToEndWithItsSteps() {
        Account admin = fixtures.user("admin");
        PlatformEntity team = fixtures.team("metrics", admin);
        Map<String, String> cpu = Map.of("executor", "cpu");
        Map<String, String> succeeded = Map.of("executor", "cpu", "state", "succeeded");
        PrometheusText before = metrics();
        String model = given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(admin.key())
                .body(Map.of("entity", team.name, "project", "agents", "name", "counted", "base_model", "fulcrum-tiny"))
                .post("/v1/preview/models").then().statusCode(201).extract().path("id");
        Map<String, Object> group = Map.of("trajectories",
                List.of(trajectory("say hi", "hi", 1), trajectory("say hi", "ho", 0)), "exceptions", List.of());
        given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(admin.key())
                .body(Map.of("model_id", model, "trajectory_groups", List.of(group))).post("/v1/preview/training-jobs")
                .then().statusCode(202);
        PrometheusText after = awaitMetrics("a finished job",
                t -> t.sum("fulcrum_training_jobs_finished_total", succeeded)
                        - before.sum("fulcrum_training_jobs_finished_total", succeeded) >= 1);
        assertTrue(delta(before, after, "fulcrum_training_jobs_started_total", cpu) >= 1);
        assertTrue(delta(before, after, "fulcrum_training_step_duration_seconds_count", cpu) >= 1);
        assertEquals(1, after.samples("fulcrum_training_jobs", Map.of("executor", "cpu", "state", "queued")).size());
    }

    private static Map<String, Object> trajectory(String prompt, String answer, double reward) {
        Map<String, Object> choice = Map.of("finish_reason", "stop", "index", 0, "logprobs",
                Map.of("content", List.of()), "message", Map.of("role", "assistant", "content", answer));
        return Map.of("messages_and_choices", List.of(Map.of("role", "user", "content", prompt), choice), "tools",
                List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    private static double delta(PrometheusText before, PrometheusText after, String name, Map<String, String> labels) {
        return after.sum(name, labels) - before.sum(name, labels);
    }
}

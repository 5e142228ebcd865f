package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.automations.WebhookDelivery;
import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.platform.http.HttpRequestMetrics;
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

    @Inject
    Optional<ExemplarSampler> exemplars;

    static PrometheusText metrics() {
        return PrometheusText.fetch();
    }

    /** Reads the page until {@code condition} holds, failing after {@link #WITHIN}. */
    static PrometheusText awaitMetrics(String what, Predicate<PrometheusText> condition) {
        return await("metrics showing " + what).atMost(WITHIN).until(MetricsTest::metrics, condition);
    }

    @Test
    void noExemplarsAreSampledWithoutTraces() {
        // the SDK is off (no exporter): no meter update looks for a span (MetricExemplars; TracingTest has them on)
        assertTrue(exemplars.isEmpty());
    }

    @Test
    void theMetricsPageIsPrometheusTextWithTheExtensionsAndFulcrumsFamilies() {
        given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).when()
                .get("/v2/admin/metrics-missing/datasets/nothing/versions/latest").then().statusCode(404);
        // the request is counted as its answer ends, which the client may see first
        PrometheusText text = awaitMetrics("the 404 of a templated path",
                t -> t.samples("http_server_requests_seconds_count", Map.of("status", "404")).stream()
                        .anyMatch(s -> s.labels().get("uri").startsWith("/v2/{")));
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
            // a model whose one replica is down: its failures eject it, and its fallback answers
            String fallback = Fixtures.unique("metrics/fallback");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY).body(Map.of("id", fallback, "backend",
                            "openai-compatible", "base_url", stub.baseUrl(), "upstream_model", "echo"))
                    .post("/api/v1/admin/models").then().statusCode(201);
            String down = Fixtures.unique("metrics/down");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY).body(Map.of("id", down, "backend", "openai-compatible",
                            "base_url", "http://127.0.0.1:9/v1", "fallbacks", List.of(fallback)))
                    .post("/api/v1/admin/models").then().statusCode(201);
            for (int i = 0; i < 3; i++) {
                given().contentType(ContentType.JSON).auth().oauth2(user.key())
                        .body(Map.of("model", down, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                        .post("/v1/chat/completions").then().statusCode(200);
            }
        }
        Pattern name = Pattern.compile("fulcrum_[a-z_]+");
        Map<String, List<String>> named = new HashMap<>();
        for (String file : List.of("docs/operations.md", "docs/grafana/fulcrum.json")) {
            Matcher names = name.matcher(Files.readString(Path.of(file)));
            List<String> found = new ArrayList<>();
            while (names.find()) {
                found.add(names.group());
            }
            assertTrue(found.size() > 20, file);
            named.put(file, found);
        }
        // the model's meters are made while the answers end, which the client may see first
        PrometheusText text = awaitMetrics("every family the docs name",
                t -> named.values().stream().flatMap(List::stream).allMatch(n -> onPage(t, n)));
        named.forEach((file, names) -> names
                .forEach(n -> assertTrue(onPage(text, n), file + " names " + n + ", which is not on the page")));
    }

    private static boolean onPage(PrometheusText text, String name) {
        String family = name.replaceAll("_(bucket|sum|count)$", "");
        return text.type(family) != null || text.type(family.replaceAll("_total$", "")) != null;
    }

    @Test
    void pathsThatMatchNoRouteShareOneLabelValue() {
        Map<String, String> notFound = Map.of("uri", "NOT_FOUND", "status", "404");
        PrometheusText before = metrics();
        for (int i = 0; i < 3; i++) {
            given().when().get("/no-such-route/" + UUID.randomUUID()).then().statusCode(404);
        }
        PrometheusText text = awaitMetrics("three more requests not found",
                t -> delta(before, t, "http_server_requests_seconds_count", notFound) >= 3);
        assertTrue(text.samples().stream().noneMatch(s -> String.valueOf(s.labels().get("uri")).contains("no-such")),
                "an unmatched path is not a label value");
        assertEquals(3, delta(before, text, "http_server_requests_seconds_count", notFound));
    }

    /**
     * Requests answered before RESTEasy matched a method (a method the path does not take, a body or an answer of a
     * type it does not take, a request line too long) and RESTEasy's own answer to OPTIONS carry no template: they are
     * labelled UNKNOWN, never with the path as sent, so that no client can add label values; sent with more distinct
     * paths than HttpRequestMetrics.MAX_URIS, they would otherwise keep every endpoint not yet seen out of the metrics.
     */
    @Test
    void requestsAnsweredBeforeMatchingAreLabelledUnknownHoweverManyPathsTheyName() {
        String marker = "lbl" + UUID.randomUUID().toString().replace("-", "");
        // the five answers sent in turns below, by their method and status
        List<Map<String, String>> answers = List.of(Map.of("method", "PATCH", "status", "405"),
                Map.of("method", "POST", "status", "415"), Map.of("method", "GET", "status", "406"),
                Map.of("method", "GET", "status", "414"), Map.of("method", "OPTIONS", "status", "200"));
        PrometheusText before = metrics();
        Set<String> labelsBefore = uris(before);
        // a 4xx of a matched template without parameters keeps its template, which is also its path
        Map<String, String> refused = Map.of("uri", "/v1/models", "status", "401");
        given().when().get("/v1/models").then().statusCode(401);
        int distinct = HttpRequestMetrics.MAX_URIS + 20;
        for (int i = 0; i < distinct; i++) {
            String team = marker + i;
            switch (i % answers.size()) {
                case 0 -> given().when().patch("/v2/" + team + "/p/datasets").then().statusCode(405);
                case 1 -> given().contentType("text/csv").body("a,b").when().post("/api/v1/teams/" + team + "/secrets")
                        .then().statusCode(415);
                case 2 -> given().accept("application/xml").when().get("/api/v1/teams/" + team + "/secrets").then()
                        .statusCode(406);
                case 3 -> given().when().get("/api/v1/teams/" + team + "/" + "a".repeat(9_000)).then().statusCode(414);
                default -> given().when().options("/api/v1/teams/" + team + "/secrets").then().statusCode(200);
            }
        }
        // a request is counted as its answer ends, which its client may see first
        PrometheusText after = awaitMetrics("the requests, each under its status",
                t -> answers.stream().allMatch(
                        a -> delta(before, t, "http_server_requests_seconds_count", a) >= distinct / answers.size())
                        && delta(before, t, "http_server_requests_seconds_count", Map.of("status", "401")) >= 1);
        assertEquals(1, delta(before, after, "http_server_requests_seconds_count", refused));
        assertTrue(
                after.samples().stream().noneMatch(s -> s.labels().values().stream().anyMatch(v -> v.contains(marker))),
                "a path as sent is no label value");
        Set<String> added = new HashSet<>(uris(after));
        added.removeAll(labelsBefore);
        added.removeAll(Set.of(HttpRequestMetrics.UNKNOWN, "/q/metrics", refused.get("uri")));
        assertEquals(Set.of(), added, "label values added by " + distinct + " paths");
        for (Map<String, String> answer : answers) {
            Map<String, String> unknown = new HashMap<>(answer);
            unknown.put("uri", HttpRequestMetrics.UNKNOWN);
            assertEquals(distinct / answers.size(), delta(before, after, "http_server_requests_seconds_count", unknown),
                    "requests answered " + answer);
        }
    }

    /**
     * Request times are a histogram (the dashboard's 95th percentile reads its buckets), with the requests under way
     * beside them; a method of a client's own is no label value.
     */
    @Test
    void requestTimesAreAHistogramAndAMethodOfItsOwnIsNoLabelValue() {
        String method = "FROB" + UUID.randomUUID().toString().replace("-", "").substring(0, 8).toUpperCase();
        Map<String, String> models = Map.of("uri", "/v1/models", "status", "200", "method", "GET");
        PrometheusText before = metrics();
        given().auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).when().get("/v1/models").then().statusCode(200);
        int refused = given().when().request(method, "/v1/models").then().extract().statusCode();
        given().when().get("/q/health/ready").then().statusCode(200);
        given().when().get("/q/health/group/" + method).then().statusCode(200);
        assertTrue(refused >= 400 && refused < 500, "a method of its own: " + refused);
        Map<String, String> unknown = Map.of("method", HttpRequestMetrics.UNKNOWN, "status", Integer.toString(refused));
        PrometheusText text = awaitMetrics("both requests",
                t -> delta(before, t, "http_server_requests_seconds_count", models) >= 1
                        && delta(before, t, "http_server_requests_seconds_count", unknown) >= 1);
        Map<String, String> everyRequest = new HashMap<>(models);
        everyRequest.put("le", "+Inf");
        assertEquals(text.sum("http_server_requests_seconds_count", models),
                text.sum("http_server_requests_seconds_bucket", everyRequest));
        everyRequest.put("le", "60.0");
        assertEquals(text.sum("http_server_requests_seconds_count", models),
                text.sum("http_server_requests_seconds_bucket", everyRequest));
        assertTrue(text.samples("http_server_requests_seconds_bucket", models).size() > 10, "buckets");
        assertTrue(
                text.samples().stream().noneMatch(s -> s.labels().values().stream().anyMatch(v -> v.contains(method))),
                "a method or a health group as sent is no label value");
        // Quarkus's own routes are labelled by their paths, a health group by its route's
        assertTrue(uris(text).containsAll(Set.of("/q/health/ready", "/q/health/group/{group}")), "Quarkus's routes");
        assertEquals(1, text.samples("http_server_active_requests", Map.of()).size(), "requests under way");
    }

    private static Set<String> uris(PrometheusText text) {
        return text.samples("http_server_requests_seconds_count", Map.of()).stream().map(s -> s.labels().get("uri"))
                .collect(Collectors.toSet());
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
        // answered by the resource method or ahead of it from memory, a read is timed under the method's template
        Map<String, String> timed = Map.of("uri", "/v2/{entity}/{project}/datasets/{object_id}/versions/{digest}",
                "status", "200", "method", "GET");
        PrometheusText after = awaitMetrics("three reads",
                t -> delta(before, t, "fulcrum_dataset_reads_total", hit)
                        + delta(before, t, "fulcrum_dataset_reads_total", miss) >= 3
                        && delta(before, t, "http_server_requests_seconds_count", timed) >= 3);
        assertEquals(3, delta(before, after, "http_server_requests_seconds_count", timed), "every read timed once");
        // the first read misses and a repeated one hits; an access change committed by an earlier test may reach this
        // replica between the reads and drop the cached answer once more (a second miss), so the split is not fixed
        double misses = delta(before, after, "fulcrum_dataset_reads_total", miss);
        double hits = delta(before, after, "fulcrum_dataset_reads_total", hit);
        assertEquals(3, misses + hits, "every read counted once");
        assertTrue(misses >= 1, "the first read misses");
        assertTrue(hits >= 1, "a repeated read hits");
        // the cache reports itself too (docs/operations.md, Caches): every answer from memory was a hit of it
        assertTrue(delta(before, after, "cache_gets_total", Map.of("cache", "dataset_reads", "result", "hit")) >= hits,
                "the dataset_reads cache counts its hits");
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

            // each is counted as its answer ends, which the client may see first; the stream's first token before
            PrometheusText text = awaitMetrics("two requests of " + model,
                    t -> t.sum("fulcrum_inference_requests_total", ofModel) == 2
                            && t.sum("fulcrum_inference_request_duration_seconds_count", ofModel) == 2
                            && t.sum("fulcrum_inference_in_flight", Map.of()) == 0);
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
            // a 5xx of the chat route (a Vert.x route, not RESTEasy) is labelled with the route's path
            Map<String, String> answered = Map.of("uri", "/v1/chat/completions", "status", "502");
            PrometheusText before = metrics();
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                    .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(502);
            PrometheusText text = awaitMetrics("the upstream error of " + model,
                    t -> t.sum("fulcrum_inference_upstream_errors_total",
                            Map.of("model", model, "kind", "bad_response")) == 1
                            && delta(before, t, "http_server_requests_seconds_count", answered) >= 1);
            assertEquals(1, text.sum("fulcrum_inference_requests_total", Map.of("model", model, "status", "502")));
            assertEquals(1, delta(before, text, "http_server_requests_seconds_count", answered));
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
            // the counters are the replica's, and deliveries of other tests may still be under way: the deltas below
            // are this test's own once none is
            await("no delivery of another test under way").atMost(WITHIN).until(
                    () -> QuarkusTransaction.requiringNew().call(() -> WebhookDelivery.count("state", "pending")),
                    pending -> pending == 0);
            PrometheusText before = metrics();
            QuarkusTransaction.requiringNew().run(() -> {
                deliveries.enqueue(ok, null, null, "{\"n\":1}");
                deliveries.enqueue(ok, null, null, "{\"n\":2}");
                deliveries.enqueue(gone, null, null, "{\"n\":3}");
            });
            // every meter of an attempt moves before its outcome is written: the outcomes are the condition
            await("two deliveries and one failure").atMost(WITHIN)
                    .until(() -> states(ok).equals(List.of("succeeded", "succeeded"))
                            && states(gone).equals(List.of("failed")));
            PrometheusText after = metrics();
            assertEquals(2, delta(before, after, "fulcrum_webhook_deliveries_total", Map.of("outcome", "delivered")));
            assertEquals(1, delta(before, after, "fulcrum_webhook_deliveries_total", Map.of("outcome", "failed")));
            assertEquals(2, delta(before, after, "fulcrum_webhook_attempts_total", Map.of("result", "2xx")));
            assertEquals(1, delta(before, after, "fulcrum_webhook_attempts_total", Map.of("result", "4xx")));
            assertEquals(3, delta(before, after, "fulcrum_webhook_attempt_duration_seconds_count", Map.of()));
            assertEquals(2, delta(before, after, "fulcrum_webhook_delivery_latency_seconds_count", Map.of()));
            assertEquals(1, delta(before, after, "fulcrum_webhooks_disabled_total", Map.of("reason", "gone")));
        } finally {
            receiver.stop(0);
        }
    }

    /** The states of a webhook's deliveries, as written. */
    private List<String> states(long webhook) {
        return deliveries.listByWebhook(webhook, null, WebhookDeliveries.MAX_PAGE, null).deliveries().stream()
                .map(d -> d.state().value()).toList();
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

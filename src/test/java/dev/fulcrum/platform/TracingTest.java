package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.inference.ReplicaStub;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Traces, recorded into an in-memory exporter: a request is one trace holding its server span, its database work and
 * the upstream model server call, whose {@code traceparent} reaches the model server; each webhook attempt is a client
 * span whose {@code traceparent} the endpoint receives.
 */
@QuarkusTest
@TestProfile(OperatorSettings.class)
class TracingTest {

    static final Duration WITHIN = Duration.ofSeconds(20);
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");

    static OpenAiStub stub;

    @Inject
    InMemorySpanExporter spans;

    @Inject
    Fixtures fixtures;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    Optional<ExemplarSampler> exemplars;

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
    }

    @Test
    void exemplarsAreSampledWhileTracesAreMade() {
        assertTrue(exemplars.isPresent(), "the metrics carry the trace ids of recent requests (MetricExemplars)");
    }

    @BeforeEach
    void forget() {
        spans.reset();
    }

    private String model(String upstreamModel) {
        String id = Fixtures.unique("traced/" + upstreamModel);
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .body(Map.of("id", id, "backend", "openai-compatible", "base_url", stub.baseUrl(), "upstream_model",
                        upstreamModel, "api_key", "upstream-secret"))
                .post("/api/v1/admin/models").then().statusCode(201);
        return id;
    }

    /** The finished spans once one matches, failing after {@link #WITHIN}. */
    private List<SpanData> awaitSpan(String what, Predicate<SpanData> wanted) {
        return await("a span " + what).atMost(WITHIN).until(spans::getFinishedSpanItems,
                finished -> finished.stream().anyMatch(wanted));
    }

    /** The first finished span that matches, once there is one. */
    private SpanData span(String what, Predicate<SpanData> wanted) {
        return awaitSpan(what, wanted).stream().filter(wanted).findFirst().orElseThrow();
    }

    private void chat(Account user, String model, int status) {
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                .post("/v1/chat/completions").then().statusCode(status);
    }

    @Test
    void aCompletionIsOneTraceWithItsServerSpanAndTheUpstreamCallWhoseTraceparentReachesTheModelServer() {
        Account user = fixtures.user("traced");
        String model = model("echo");
        spans.reset();
        int before = stub.traceparents.size();
        chat(user, model, 200);

        SpanData upstream = span("of the upstream call",
                s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(200).equals(s.getAttributes().get(STATUS)));
        String trace = upstream.getTraceId();
        // the server span ends after the upstream call's, when the answer has been sent: the client may see it first
        SpanData server = span("of the request whose child the upstream call is", s -> s.getKind() == SpanKind.SERVER
                && s.getTraceId().equals(trace) && s.getSpanId().equals(upstream.getParentSpanId()));
        assertTrue(server.getName().endsWith("/v1/chat/completions"), server.getName());
        assertEquals(Long.valueOf(200), server.getAttributes().get(STATUS));
        assertTrue(upstream.getStatus().getStatusCode() != StatusCode.ERROR);
        // the model server got the trace: the traceparent names this trace and the upstream call's span
        assertEquals(before + 1, stub.traceparents.size());
        assertEquals("00-" + trace + "-" + upstream.getSpanId() + "-01", stub.traceparents.get(before));
    }

    private static boolean database(SpanData span) {
        return "postgresql".equals(span.getAttributes().get(AttributeKey.stringKey("db.system")))
                || "postgresql".equals(span.getAttributes().get(AttributeKey.stringKey("db.system.name")));
    }

    @Test
    void theDatabaseWorkOfARequestIsInItsTrace() {
        String project = Fixtures.unique("traced");
        given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .contentType(ContentType.JSON).body(Map.of("name", "Traced", "rows", List.of(Map.of("q", "a"))))
                .post("/v2/admin/" + project + "/datasets").then().statusCode(200);
        spans.reset();
        given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .get("/v2/admin/" + project + "/datasets/traced/versions/latest").then().statusCode(200);
        // the create's server span may end after the reset: the read's is the GET
        Predicate<SpanData> read = s -> s.getKind() == SpanKind.SERVER && s.getName().startsWith("GET ");
        List<SpanData> finished = awaitSpan("of the read", read);
        SpanData server = finished.stream().filter(read).findFirst().orElseThrow();
        List<SpanData> statements = finished.stream().filter(
                s -> s.getTraceId().equals(server.getTraceId()) && s.getKind() == SpanKind.CLIENT && database(s))
                .toList();
        assertFalse(statements.isEmpty(), "the read's statements in its trace: " + finished);
        assertTrue(statements.stream().allMatch(s -> s.getParentSpanId().equals(server.getSpanId())));
    }

    @Test
    void aFailingModelServerShowsAsAnErrorOnTheUpstreamSpanAndTheRequest() {
        Account user = fixtures.user("traced");
        String model = model("server-error");
        spans.reset();
        chat(user, model, 502);
        List<SpanData> finished = awaitSpan("of the failed upstream call",
                s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(500).equals(s.getAttributes().get(STATUS)));
        SpanData upstream = finished.stream()
                .filter(s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(500).equals(s.getAttributes().get(STATUS)))
                .findFirst().orElseThrow();
        assertEquals(StatusCode.ERROR, upstream.getStatus().getStatusCode());
        SpanData server = span("of the request whose child the upstream call is", s -> s.getKind() == SpanKind.SERVER
                && s.getTraceId().equals(upstream.getTraceId()) && s.getSpanId().equals(upstream.getParentSpanId()));
        assertTrue(server.getName().endsWith("/v1/chat/completions"), server.getName());
        assertEquals(Long.valueOf(502), server.getAttributes().get(STATUS));
        assertEquals(StatusCode.ERROR, server.getStatus().getStatusCode());
    }

    /**
     * A request retried on another replica: both attempts are client spans of its trace, and the request's span has a
     * {@code fulcrum.retry} event naming the replica that failed and the one that answered.
     */
    @Test
    void aRetryOnAnotherReplicaIsInTheRequestsTrace() {
        Account user = fixtures.user("traced");
        ReplicaStub failing = new ReplicaStub("127.0.0.1", 0);
        ReplicaStub healthy = new ReplicaStub("127.0.0.1", 0);
        failing.status = 503;
        try {
            String id = Fixtures.unique("traced/replicas");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .body(Map.of("id", id, "backend", "openai-compatible", "base_urls",
                            List.of(failing.baseUrl(), healthy.baseUrl()), "upstream_model", ReplicaStub.BASE))
                    .post("/api/v1/admin/models").then().statusCode(201);
            SpanData refused = null;
            for (int i = 0; i < 20 && refused == null; i++) { // two random choices: until one met the failing replica
                spans.reset();
                chat(user, id, 200);
                span("of the request", s -> s.getKind() == SpanKind.SERVER); // it ends after its attempts
                refused = spans(503).stream().findFirst().orElse(null);
            }
            assertNotNull(refused, "a request met the failing replica");
            SpanData first = refused;
            SpanData answered = span("of the attempt that answered",
                    s -> s.getKind() == SpanKind.CLIENT && s.getTraceId().equals(first.getTraceId())
                            && Long.valueOf(200).equals(s.getAttributes().get(STATUS)));
            SpanData server = span("of the request",
                    s -> s.getKind() == SpanKind.SERVER && s.getTraceId().equals(first.getTraceId()));
            assertEquals(server.getSpanId(), answered.getParentSpanId());
            EventData retry = server.getEvents().stream().filter(e -> e.getName().equals("fulcrum.retry")).findFirst()
                    .orElseThrow(() -> new AssertionError("no retry event: " + server.getEvents()));
            assertEquals(failing.name(), retry.getAttributes().get(AttributeKey.stringKey("fulcrum.replica")));
            assertEquals(healthy.name(), retry.getAttributes().get(AttributeKey.stringKey("fulcrum.next_replica")));
        } finally {
            failing.close();
            healthy.close();
        }
    }

    /** The finished client spans answered with {@code status}. */
    private List<SpanData> spans(int status) {
        return spans.getFinishedSpanItems().stream().filter(
                s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(status).equals(s.getAttributes().get(STATUS)))
                .toList();
    }

    @Test
    void eachWebhookAttemptIsAClientSpanWhoseTraceparentTheEndpointReceives() throws IOException {
        List<String> traceparents = new CopyOnWriteArrayList<>();
        List<String> signatures = new CopyOnWriteArrayList<>();
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            traceparents.add(String.valueOf(exchange.getRequestHeaders().getFirst("traceparent")));
            signatures.add(String.valueOf(exchange.getRequestHeaders().getFirst("webhook-signature")));
            exchange.sendResponseHeaders(traceparents.size() == 1 ? 503 : 200, -1);
            exchange.close();
        });
        receiver.start();
        try {
            Account admin = fixtures.user("admin");
            PlatformEntity team = fixtures.team("traced", admin);
            given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("name", "SIGNING", "value", "whsec_" + "c2lnbmluZyBzZWNyZXQ="))
                    .post("/api/v1/teams/" + team.name + "/secrets").then().statusCode(201);
            long webhook = given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("name", Fixtures.unique("hook"), "url",
                            "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook", "signing_secret",
                            "SIGNING"))
                    .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                    .getLong("id");
            spans.reset();
            long delivery = QuarkusTransaction.requiringNew()
                    .call(() -> deliveries.enqueue(webhook, null, null, "{\"traced\":true}"));
            // this delivery's attempts, not those of another test's deliveries that may still be under way
            Predicate<SpanData> ofThisDelivery = s -> s.getName().equals("POST webhook")
                    && ("msg_" + delivery).equals(s.getAttributes().get(AttributeKey.stringKey("webhook.id")));
            List<SpanData> finished = awaitSpan("of the second attempt",
                    s -> ofThisDelivery.test(s) && Long.valueOf(200).equals(s.getAttributes().get(STATUS)));
            List<SpanData> attempts = finished.stream().filter(ofThisDelivery).toList();
            assertEquals(2, attempts.size(), attempts.toString());
            assertEquals(2, traceparents.size());
            // each attempt's span is the one whose traceparent the endpoint received, whichever order they are in
            for (SpanData attempt : attempts) {
                assertEquals(SpanKind.CLIENT, attempt.getKind());
                assertTrue(traceparents.contains("00-" + attempt.getTraceId() + "-" + attempt.getSpanId() + "-01"),
                        attempt + " in " + traceparents);
            }
            for (String signature : signatures) {
                assertNotNull(signature);
                assertTrue(signature.startsWith("v1,"), signature);
            }
            SpanData refused = attempts.stream().filter(a -> Long.valueOf(503).equals(a.getAttributes().get(STATUS)))
                    .findFirst().orElseThrow(() -> new AssertionError("no attempt answered 503 in " + attempts));
            assertEquals(StatusCode.ERROR, refused.getStatus().getStatusCode());
            SpanData accepted = attempts.stream().filter(a -> a != refused).findFirst().orElseThrow();
            assertTrue(accepted.getStatus().getStatusCode() != StatusCode.ERROR);
        } finally {
            receiver.stop(0);
        }
    }
}

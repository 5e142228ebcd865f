package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
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
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.inference.OpenAiStub;
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
@TestProfile(ObservabilityProfile.class)
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

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
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
        long deadline = System.nanoTime() + WITHIN.toNanos();
        while (true) {
            List<SpanData> finished = spans.getFinishedSpanItems();
            if (finished.stream().anyMatch(wanted)) {
                return finished;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("No span " + what + " among " + finished);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private static SpanData serverSpan(List<SpanData> finished, String route) {
        return finished.stream().filter(s -> s.getKind() == SpanKind.SERVER && s.getName().endsWith(route)).findFirst()
                .orElseThrow(() -> new AssertionError("No server span of " + route + " in " + finished));
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

        List<SpanData> finished = awaitSpan("of the upstream call",
                s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(200).equals(s.getAttributes().get(STATUS)));
        finished = awaitSpan("of the request", s -> s.getKind() == SpanKind.SERVER);
        SpanData server = serverSpan(finished, "/v1/chat/completions");
        String trace = server.getTraceId();
        assertEquals(Long.valueOf(200), server.getAttributes().get(STATUS));
        SpanData upstream = finished.stream()
                .filter(s -> s.getKind() == SpanKind.CLIENT && s.getTraceId().equals(trace)
                        && Long.valueOf(200).equals(s.getAttributes().get(STATUS)))
                .findFirst().orElseThrow(() -> new AssertionError("no upstream span in " + spans));
        assertEquals(server.getSpanId(), upstream.getParentSpanId(), "the upstream call is a child of the request");
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
        finished = awaitSpan("of the request", s -> s.getKind() == SpanKind.SERVER
                && s.getTraceId().equals(upstream.getTraceId()) && s.getSpanId().equals(upstream.getParentSpanId()));
        SpanData server = serverSpan(
                finished.stream().filter(s -> s.getTraceId().equals(upstream.getTraceId())).toList(),
                "/v1/chat/completions");
        assertEquals(Long.valueOf(502), server.getAttributes().get(STATUS));
        assertEquals(StatusCode.ERROR, server.getStatus().getStatusCode());
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
            QuarkusTransaction.requiringNew().run(() -> deliveries.enqueue(webhook, null, null, "{\"traced\":true}"));
            List<SpanData> finished = awaitSpan("of the second attempt",
                    s -> s.getName().equals("POST webhook") && Long.valueOf(200).equals(s.getAttributes().get(STATUS)));
            List<SpanData> attempts = finished.stream().filter(s -> s.getName().equals("POST webhook")).toList();
            assertEquals(2, attempts.size(), attempts.toString());
            assertEquals(2, traceparents.size());
            for (int i = 0; i < 2; i++) {
                SpanData attempt = attempts.get(i);
                assertEquals(SpanKind.CLIENT, attempt.getKind());
                assertEquals("00-" + attempt.getTraceId() + "-" + attempt.getSpanId() + "-01", traceparents.get(i));
                assertNotNull(signatures.get(i));
                assertTrue(signatures.get(i).startsWith("v1,"), signatures.get(i));
            }
            assertEquals(Long.valueOf(503), attempts.get(0).getAttributes().get(STATUS));
            assertEquals(StatusCode.ERROR, attempts.get(0).getStatus().getStatusCode());
            assertTrue(attempts.get(1).getStatus().getStatusCode() != StatusCode.ERROR);
        } finally {
            receiver.stop(0);
        }
    }
}

package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The log as JSON lines (quarkus.log.*.json.enabled): every line is one JSON object, a line written within a request
 * carries the request's trace and span ids, and no API key or secret appears in any line while requests carrying them
 * happen, succeed and fail (docs/security.md: secret values are never logged).
 */
@QuarkusTest
@TestProfile(OperatorSettings.class)
class JsonLogTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    Fixtures fixtures;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    InMemorySpanExporter spans;

    private static List<JsonNode> lines() throws IOException {
        List<JsonNode> parsed = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(OperatorSettings.LOG_FILE), StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                parsed.add(JSON.readTree(line)); // fails on a line that is not JSON
            }
        }
        return parsed;
    }

    private static List<JsonNode> awaitLines(String marker) {
        return await("a log line with " + marker).atMost(Duration.ofSeconds(10)).until(JsonLogTest::lines,
                lines -> lines.stream().anyMatch(l -> l.path("message").asText().contains(marker)));
    }

    @Test
    void aLineWrittenWithinARequestCarriesItsTraceAndSpanIds() throws Exception {
        String marker = Fixtures.unique("marker");
        spans.reset();
        given().auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).queryParam("marker", marker).when()
                .post("/test-support/log-probe").then().statusCode(200);
        JsonNode line = awaitLines(marker).stream().filter(l -> l.path("message").asText().contains(marker)).findFirst()
                .orElseThrow();
        assertEquals("INFO", line.path("level").asText());
        String traceId = line.path("mdc").path("traceId").asText();
        String spanId = line.path("mdc").path("spanId").asText();
        assertTrue(traceId.matches("[0-9a-f]{32}"), line.toString());
        assertTrue(spanId.matches("[0-9a-f]{16}"), line.toString());
        // the request's server span ends after its answer, which the client may see first
        SpanData server = await("the line's trace is the request's").atMost(Duration.ofSeconds(10))
                .until(() -> spans.getFinishedSpanItems().stream()
                        .filter(s -> s.getKind() == SpanKind.SERVER && s.getTraceId().equals(traceId)).findFirst(),
                        Optional::isPresent)
                .orElseThrow();
        assertEquals(server.getSpanId(), spanId);
    }

    @Test
    void noApiKeyOrSecretIsEverLogged() throws Exception {
        String teamSecret = Fixtures.unique("team-secret-value");
        String upstreamKey = Fixtures.unique("upstream-api-key");
        String badKey = Fixtures.unique("fk_revoked-or-made-up");
        Account admin = fixtures.user("admin");
        PlatformEntity team = fixtures.team("logged", admin);
        AtomicInteger received = new AtomicInteger();
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            received.incrementAndGet();
            // a careless endpoint: the request and its credentials echoed in an error
            byte[] echo = (new String(body, StandardCharsets.UTF_8) + " "
                    + exchange.getRequestHeaders().getFirst("Authorization")).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(500, echo.length);
            exchange.getResponseBody().write(echo);
            exchange.close();
        });
        receiver.start();
        try {
            given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("name", "TOKEN", "value", teamSecret)).post("/api/v1/teams/" + team.name + "/secrets")
                    .then().statusCode(201);
            long webhook = given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("name", Fixtures.unique("hook"), "url",
                            "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook", "access_token_secret",
                            "TOKEN", "signing_secret", "TOKEN"))
                    .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                    .getLong("id");
            QuarkusTransaction.requiringNew()
                    .run(() -> deliveries.enqueue(webhook, null, null, "{\"with\":\"" + teamSecret + "\"}"));
            // an upstream that cannot be reached, with its key
            String model = Fixtures.unique("logged/model");
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .body(Map.of("id", model, "backend", "openai-compatible", "base_url", "http://127.0.0.1:9/v1",
                            "upstream_model", "m", "api_key", upstreamKey, "connect_timeout_ms", 500))
                    .post("/api/v1/admin/models").then().statusCode(201);
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(admin.key())
                    .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(503);
            // a key that is no key, on each interface, in the header and where a key may be given as a password
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(badKey)
                    .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(401);
            given().auth().preemptive().basic("api", badKey).get("/v2/admin/logged/datasets/x/versions/latest").then()
                    .statusCode(401);
            given().auth().oauth2(badKey).get("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(401);
            given().auth().oauth2(admin.key()).get("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(200);
            await("the attempts of the delivery, all failing").atMost(Duration.ofSeconds(15))
                    .until(() -> received.get() >= 3);

            String marker = Fixtures.unique("end");
            given().auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).queryParam("marker", marker).when()
                    .post("/test-support/log-probe").then().statusCode(200);
            List<JsonNode> lines = awaitLines(marker);
            assertFalse(lines.isEmpty());
            for (JsonNode line : lines) {
                String text = line.toString();
                for (String secret : List.of(teamSecret, upstreamKey, badKey, admin.key(),
                        EmbeddedPostgresResource.ADMIN_KEY)) {
                    assertFalse(text.contains(secret), "a log line holds a secret: " + text);
                }
            }
        } finally {
            receiver.stop(0);
        }
    }
}

package dev.fulcrum.automations;

import static dev.fulcrum.automations.WebhooksClient.as;
import static dev.fulcrum.automations.WebhooksClient.webhook;
import static dev.fulcrum.automations.WebhooksClient.webhooks;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;
import dev.fulcrum.support.WebhookReceiver.Received;

/** {@code POST .../webhooks/{id}/test} against a real endpoint started by the test. */
@QuarkusTest
class WebhookTestRequestTest {

    static final String SIGNING = "whsec_" + java.util.Base64.getEncoder().encodeToString("k3y-bytes".getBytes());

    @Inject
    Fixtures fixtures;

    @Inject
    EntityManager em;

    private WebhookReceiver receiver;
    private Account admin;
    private PlatformEntity team;

    @BeforeEach
    void setUp() throws IOException {
        receiver = new WebhookReceiver();
        admin = fixtures.user("admin");
        team = fixtures.team("lab", admin);
        WebhooksClient.secret(admin, team.name, "TOKEN", "tok-\"1\"");
        WebhooksClient.secret(admin, team.name, "SIGNING", SIGNING);
        WebhooksClient.secret(admin, team.name, "PASSWORD", "p\"w}\\\n");
    }

    @AfterEach
    void tearDown() {
        receiver.close();
    }

    private String create(String url, String token, String signing) {
        return webhooks(team.name) + "/"
                + WebhooksClient.createWebhook(admin, team.name, webhook(Fixtures.unique("hook"), url, token, signing));
    }

    @Test
    void sendsTheRealSignedRequestAndShowsTheAnswer() throws Exception {
        receiver.answer("/ok", new Answer(200, Map.of("X-Reply", "yes"), "{\"received\":true}", 0));
        String path = create(receiver.url("/ok"), "TOKEN", "SIGNING");
        String payload = "{\"text\": \"pw=$PASSWORD\", \"token\": \"${ACCESS_TOKEN}\", \"n\": 1}";
        JsonPath result = as(admin).body(Map.of("payload", payload)).post(path + "/test").then().statusCode(200)
                .body("ok", equalTo(true)).body("status", equalTo(200)).body("body", equalTo("{\"received\":true}"))
                .body("headers.x-reply", equalTo("yes")).body("body_truncated", equalTo(false))
                .body("error", nullValue()).body("webhook_id", startsWith("msg_")).extract().jsonPath();
        assertTrue(result.getLong("latency_ms") >= 0);

        List<Received> got = receiver.received("/ok");
        assertEquals(1, got.size());
        Received request = got.get(0);
        assertEquals("POST", request.method());
        assertEquals("application/json", request.header("Content-Type"));
        assertTrue(request.header("User-Agent").startsWith("Fulcrum-Webhooks/"), request.header("User-Agent"));
        assertEquals("Bearer tok-\"1\"", request.header("Authorization"));
        assertEquals(result.getString("webhook_id"), request.header("webhook-id"));
        long timestamp = Long.parseLong(request.header("webhook-timestamp"));
        assertTrue(Math.abs(System.currentTimeMillis() / 1000 - timestamp) < 60);

        JsonNode body = new ObjectMapper().readTree(request.body());
        assertEquals("pw=p\"w}\\\n", body.get("text").textValue());
        assertEquals("tok-\"1\"", body.get("token").textValue());
        assertEquals(3, body.size());

        assertEquals(Signatures.serviceSignature(SIGNING, request.body()), request.header("X-Service-Signature"));
        assertEquals(Signatures.standardSignature(SIGNING, request.header("webhook-id"),
                request.header("webhook-timestamp"), request.body()), request.header("webhook-signature"));
    }

    @Test
    void withoutPayloadOrSecretsTheBodyIsAnEmptyObjectAndUnsigned() {
        String path = create(receiver.url("/plain"), null, null);
        as(admin).post(path + "/test").then().statusCode(200).body("ok", equalTo(true));
        Received request = receiver.received("/plain").get(0);
        assertEquals("{}", request.text());
        assertEquals(null, request.header("Authorization"));
        assertEquals(null, request.header("X-Service-Signature"));
        assertEquals(null, request.header("webhook-signature"));
    }

    @Test
    void anErrorAnswerIsShown() {
        receiver.answer("/broken", new Answer(500, Map.of(), "x".repeat(10_000), 0));
        String path = create(receiver.url("/broken"), null, null);
        String body = as(admin).body(Map.of()).post(path + "/test").then().statusCode(200).body("ok", equalTo(false))
                .body("status", equalTo(500)).body("body_truncated", equalTo(true)).extract().jsonPath()
                .getString("body");
        assertEquals(4096, body.length());
    }

    @Test
    void aConnectionErrorSaysWhy() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        String path = create("http://127.0.0.1:" + closedPort + "/hook", null, null);
        as(admin).body(Map.of()).post(path + "/test").then().statusCode(200).body("ok", equalTo(false))
                .body("status", nullValue()).body("error", containsString("Connection"));
    }

    @Test
    void aTimeoutSaysWhy() {
        receiver.answer("/slow", new Answer(200, Map.of(), "late", 3_000));
        String path = create(receiver.url("/slow"), null, null);
        as(admin).body(Map.of()).post(path + "/test").then().statusCode(200).body("ok", equalTo(false))
                .body("status", nullValue()).body("error", containsString("Timed out"));
    }

    @Test
    void redirectsAreNotFollowed() {
        receiver.answer("/moved", new Answer(302, Map.of("Location", receiver.url("/target")), "", 0));
        String path = create(receiver.url("/moved"), null, null);
        as(admin).body(Map.of()).post(path + "/test").then().statusCode(200).body("ok", equalTo(false)).body("status",
                equalTo(302));
        receiver.answer("/to-private", new Answer(307, Map.of("Location", "http://10.0.0.1/internal"), "", 0));
        String second = create(receiver.url("/to-private"), null, null);
        as(admin).body(Map.of()).post(second + "/test").then().statusCode(200).body("status", equalTo(307));
        assertEquals(List.of(), receiver.received("/target"));
    }

    @Test
    void theGuardRefusesAtSendingTime() {
        String path = create(receiver.url("/never"), null, null);
        long id = Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
        // an address that became internal after the URL was saved (the check on saving refuses it otherwise)
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("update webhooks set url = ?1 where id = ?2")
                .setParameter(1, "http://169.254.169.254/latest/meta-data").setParameter(2, id).executeUpdate());
        as(admin).body(Map.of()).post(path + "/test").then().statusCode(200).body("ok", equalTo(false))
                .body("error", containsString("Refused")).body("error", containsString("metadata"));
    }

    @Test
    void payloadProblemsAreValidationErrors() {
        String path = create(receiver.url("/p"), null, null);
        as(admin).body(Map.of("payload", "{\"a\": ")).post(path + "/test").then().statusCode(422)
                .body("errors[0].field", equalTo("payload"));
        as(admin).body(Map.of("payload", "{\"a\": \"$UNKNOWN ${project_name} ${ACCESS_TOKEN} $TOKEN\"}"))
                .post(path + "/test").then().statusCode(422)
                .body("detail", containsString("ACCESS_TOKEN, UNKNOWN, project_name"));
        assertEquals(List.of(), receiver.received("/p"));
    }

    @Test
    void aPayloadNestedTooDeeplyOrWithAnInfiniteNumberIsRefused() {
        String path = create(receiver.url("/p"), null, null);
        String deep = "[".repeat(3_000) + "]".repeat(3_000);
        as(admin).body(Map.of("payload", deep)).post(path + "/test").then().statusCode(422)
                .body("errors[0].field", equalTo("payload")).body("detail", containsString("nesting depth"));
        as(admin).body(Map.of("payload", "{\"a\": 1e400}")).post(path + "/test").then().statusCode(422)
                .body("errors[0].field", equalTo("payload"));
        // the request body itself nested that deeply
        as(admin).body("{\"payload\": \"{}\", \"unknown\": " + deep + "}").post(path + "/test").then().statusCode(422)
                .body("detail", containsString("nesting depth"));
        assertEquals(List.of(), receiver.received("/p"));
    }

    @Test
    void numbersOfAPayloadAreSentAsWritten() {
        receiver.answer("/n", new Answer(200, Map.of(), "", 0));
        String path = create(receiver.url("/n"), null, null);
        String payload = "{\"exact\":1234567890.123456789012345678901234567890,\"small\":1.50,\"e\":1e5}";
        as(admin).body(Map.of("payload", payload)).post(path + "/test").then().statusCode(200).body("ok",
                equalTo(true));
        assertEquals(payload, new String(receiver.received("/n").get(0).body(), StandardCharsets.UTF_8));
    }
}

package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.asAdmin;
import static dev.fulcrum.inference.Inference.chat;
import static dev.fulcrum.inference.Inference.events;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.Management;

/** Chat completions through an OpenAI-compatible upstream: a real HTTP server speaking the protocol. */
@QuarkusTest
class ChatCompletionsUpstreamTest {

    static OpenAiStub stub;

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
    }

    private String model(String upstreamModel) {
        return model(upstreamModel, Map.of());
    }

    private String model(String upstreamModel, Map<String, Object> extra) {
        String id = Fixtures.unique("org/" + upstreamModel);
        Inference.upstreamModel(id, stub, upstreamModel, extra);
        return id;
    }

    @Test
    void plainCompletionGoesUpstreamWithTheUpstreamModelAndKey() {
        Account user = fixtures.user("chat");
        String id = model("echo");
        Map<String, Object> body = new HashMap<>(chat(id, "Hi"));
        body.put("temperature", 0.3);
        body.put("tools", List.of(Map.of("type", "function", "function", Map.of("name", "f"))));
        body.put("vendor_extension", Map.of("x", 1));
        as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200)
                .body("object", equalTo("chat.completion")).body("model", equalTo(id))
                .body("choices[0].message.content", equalTo(OpenAiStub.ANSWER))
                .body("choices[0].finish_reason", equalTo("stop")).body("usage.prompt_tokens", equalTo(11))
                .body("usage.completion_tokens", equalTo(5)).body("usage.total_tokens", equalTo(16));
        JsonObject sent = stub.lastRequest();
        assertEquals("echo", sent.getString("model"));
        assertEquals(0.3, sent.getDouble("temperature"));
        assertEquals(1, sent.getJsonArray("tools").size());
        assertEquals(1, sent.getJsonObject("vendor_extension").getInteger("x"));
        assertEquals("Bearer upstream-secret", stub.authorizations.get(stub.authorizations.size() - 1));
    }

    @Test
    void trailingSlashIsTheSameEndpoint() {
        Account user = fixtures.user("chat");
        as(user.key()).body(chat(model("echo"), "Hi")).post("/v1/chat/completions/").then().statusCode(200)
                .body("choices[0].message.content", equalTo(OpenAiStub.ANSWER));
    }

    @Test
    void usageIsCountedWhenTheUpstreamGivesNone() {
        Account user = fixtures.user("chat");
        as(user.key()).body(chat(model("no-usage"), "Hello there")).post("/v1/chat/completions").then().statusCode(200)
                .body("usage.completion_tokens", equalTo(5)) // 19 characters at about 4 a token
                .body("usage.prompt_tokens", equalTo(7)).body("usage.total_tokens", equalTo(12));
    }

    @Test
    void streamPassesChunksInOrderAndDropsTheUsageChunkUnlessAsked() {
        Account user = fixtures.user("chat");
        String id = model("echo");
        Map<String, Object> body = new HashMap<>(chat(id, "Hi"));
        body.put("stream", true);
        String stream = as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200)
                .contentType(containsString("text/event-stream")).extract().asString();
        List<String> events = events(stream);
        assertEquals("[DONE]", events.get(events.size() - 1));
        List<JsonObject> chunks = events.subList(0, events.size() - 1).stream().map(JsonObject::new).toList();
        assertEquals(5, chunks.size(), stream);
        assertEquals("assistant",
                chunks.get(0).getJsonArray("choices").getJsonObject(0).getJsonObject("delta").getString("role"));
        StringBuilder text = new StringBuilder();
        for (JsonObject chunk : chunks) {
            assertEquals(id, chunk.getString("model"));
            assertEquals("chatcmpl-stub", chunk.getString("id"));
            assertEquals(1_700_000_000L, chunk.getLong("created"));
            text.append(chunk.getJsonArray("choices").getJsonObject(0).getJsonObject("delta").getString("content", ""));
        }
        assertEquals(OpenAiStub.ANSWER, text.toString());
        assertEquals("stop", chunks.get(4).getJsonArray("choices").getJsonObject(0).getString("finish_reason"));
        assertTrue(stub.lastRequest().getJsonObject("stream_options").getBoolean("include_usage"),
                "the upstream is always asked for usage");
    }

    @Test
    void includeUsageAddsTheUsageChunkBeforeDone() {
        Account user = fixtures.user("chat");
        for (String upstream : List.of("echo", "no-usage")) {
            Map<String, Object> body = new HashMap<>(chat(model(upstream), "Hi"));
            body.put("stream", true);
            body.put("stream_options", Map.of("include_usage", true));
            List<String> events = events(
                    as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200).extract().asString());
            assertEquals("[DONE]", events.get(events.size() - 1));
            JsonObject usage = new JsonObject(events.get(events.size() - 2));
            assertTrue(usage.getJsonArray("choices").isEmpty(), upstream);
            assertEquals(
                    usage.getJsonObject("usage").getInteger("prompt_tokens")
                            + usage.getJsonObject("usage").getInteger("completion_tokens"),
                    usage.getJsonObject("usage").getInteger("total_tokens"));
            assertEquals(3, usage.getJsonObject("usage").getInteger("completion_tokens"), upstream);
        }
    }

    @Test
    void missingOrBadKeysAre401() {
        String id = model("echo");
        as(null).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(401)
                .body("error.message", equalTo("Authentication failed"))
                .body("error.type", equalTo("authentication_error"));
        as("fk_not-a-key").body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(401)
                .body("error.message", equalTo("Authentication failed"));
        as("fk_not-a-key").get("/v1/models").then().statusCode(401).body("error.message",
                equalTo("Authentication failed"));
    }

    @Test
    void revokedKeyIsRefusedAtOnce() {
        Account user = fixtures.user("revoke");
        JsonPath created = Management.as(user).body(Map.of("name", "second")).post("/api/v1/users/me/api-keys").then()
                .statusCode(201).extract().jsonPath();
        String key = created.getString("key");
        String id = model("echo");
        as(key).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(200);
        Management.as(user).delete("/api/v1/users/me/api-keys/" + created.getLong("id")).then().statusCode(204);
        as(key).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(401);
    }

    @Test
    void unknownModelIs404() {
        Account user = fixtures.user("chat");
        as(user.key()).body(chat("no-such-model", "Hi")).post("/v1/chat/completions").then().statusCode(404)
                .body("error.code", equalTo("model_not_found")).body("error.param", equalTo("model"));
    }

    @Test
    void malformedBodiesAre400NamingTheParameter() {
        Account user = fixtures.user("chat");
        String id = model("echo");
        as(user.key()).body("{not json").post("/v1/chat/completions").then().statusCode(400)
                .body("error.type", equalTo("invalid_request_error")).body("error.param", nullValue());
        as(user.key()).body(Map.of("model", id)).post("/v1/chat/completions").then().statusCode(400).body("error.param",
                equalTo("messages"));
        as(user.key()).body(Map.of("messages", List.of(Map.of("role", "user", "content", "x"))))
                .post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("model"));
        Map<String, Object> body = new HashMap<>(chat(id, "Hi"));
        body.put("temperature", "hot");
        as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(400).body("error.param",
                equalTo("temperature"));
        body = new HashMap<>(chat(id, "Hi"));
        body.put("n", 0);
        as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("n"));
        body = new HashMap<>(chat(id, "Hi"));
        body.put("stream_options", Map.of("include_usage", true));
        as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(400).body("error.param",
                equalTo("stream_options"));
        as(user.key()).body(Map.of("model", id, "messages", List.of(Map.of("content", "x"))))
                .post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("messages[0].role"));
    }

    @Test
    void upstreamErrorsMapToOpenAiErrors() {
        Account user = fixtures.user("chat");
        as(user.key()).body(chat(model("bad-request"), "Hi")).post("/v1/chat/completions").then().statusCode(400)
                .body("error.message", equalTo("Upstream says no")).body("error.param", equalTo("temperature"));
        as(user.key()).body(chat(model("server-error"), "Hi")).post("/v1/chat/completions").then().statusCode(502)
                .body("error.type", equalTo("server_error"));
        String down = Fixtures.unique("down");
        Inference.upstreamModel(down, null, "echo", Map.of());
        as(user.key()).body(chat(down, "Hi")).post("/v1/chat/completions").then().statusCode(503).body("error.code",
                equalTo("upstream_unavailable"));
        as(user.key()).body(chat(model("slow", Map.of("timeout_ms", 300)), "Hi")).post("/v1/chat/completions").then()
                .statusCode(504).body("error.code", equalTo("upstream_timeout"));
    }

    @Test
    void projectHeaderSelectsATeamProjectOfAMember() {
        Account owner = fixtures.user("owner");
        Account outsider = fixtures.user("outsider");
        Account viewer = fixtures.user("viewer");
        PlatformEntity team = fixtures.team("team", owner);
        fixtures.member(team, viewer, Role.VIEWER);
        String id = model("echo");
        as(owner.key()).header("Compat-Project", team.name + "/chatbot").body(chat(id, "Hi"))
                .post("/v1/chat/completions").then().statusCode(200);
        as(owner.key()).header("OpenAI-Project", team.name + "/sdk").body(chat(id, "Hi")).post("/v1/chat/completions")
                .then().statusCode(200);
        as(outsider.key()).header("Compat-Project", team.name + "/chatbot").body(chat(id, "Hi"))
                .post("/v1/chat/completions").then().statusCode(403).body("error.type", equalTo("permission_error"));
        as(viewer.key()).header("OpenAI-Project", team.name + "/chatbot").body(chat(id, "Hi"))
                .post("/v1/chat/completions").then().statusCode(403);
        as(owner.key()).header("Compat-Project", "no-such-team-x/p").body(chat(id, "Hi")).post("/v1/chat/completions")
                .then().statusCode(404);
        as(owner.key()).header("Compat-Project", "no slash").body(chat(id, "Hi")).post("/v1/chat/completions").then()
                .statusCode(400).body("error.param", equalTo("Compat-Project"))
                .body("error.message", startsWith("Must be 'team/project'"));
        as(owner.key()).header("OpenAI-Project", team.name + "/").body(chat(id, "Hi")).post("/v1/chat/completions")
                .then().statusCode(400).body("error.param", equalTo("OpenAI-Project"));
        as(outsider.key()).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(200);

        await("both completions in the usage").atMost(Duration.ofSeconds(10))
                .until(() -> given(owner).queryParam("entity", team.name).queryParam("group_by", "model")
                        .get("/api/v1/usage").then().statusCode(200).extract().jsonPath()
                        .get("data.find { it.key == '" + id + "' }.requests") instanceof Integer requests
                        && requests == 2);
        JsonPath usage = given(owner).queryParam("entity", team.name).queryParam("project", "chatbot")
                .get("/api/v1/usage").then().statusCode(200).extract().jsonPath();
        assertEquals(1, usage.getInt("data[0].requests"));
        assertEquals(16, usage.getInt("data[0].total_tokens"));
        assertTrue(usage.getInt("data[0].latency_ms_p50") <= usage.getInt("data[0].latency_ms_max"));
        given(owner).queryParam("entity", team.name).queryParam("group_by", "day").get("/api/v1/usage").then()
                .statusCode(200)
                .body("data.key", hasItem(java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString()));
        given(outsider).queryParam("entity", team.name).get("/api/v1/usage").then().statusCode(403);
        given(owner).queryParam("entity", team.name).queryParam("from", "yesterday").get("/api/v1/usage").then()
                .statusCode(422);
        // without a header: the personal entity and the project "inference"
        await("the outsider's usage recorded").atMost(Duration.ofSeconds(10))
                .until(() -> !given(outsider).queryParam("entity", outsider.name()).queryParam("project", "inference")
                        .get("/api/v1/usage").then().statusCode(200).extract().jsonPath().getList("data").isEmpty());
    }

    private static io.restassured.specification.RequestSpecification given(Account account) {
        return io.restassured.RestAssured.given().filter(Contract.INFERENCE).auth().oauth2(account.key());
    }

    @Test
    void modelListHasTheBuiltinAndCatalogModels() {
        Account user = fixtures.user("models");
        String id = model("echo", Map.of("root", "base-root"));
        as(user.key()).get("/v1/models").then().statusCode(200).body("object", equalTo("list"))
                .body("data.id", hasItems("fulcrum-tiny", id))
                .body("data.find { it.id == 'fulcrum-tiny' }.root", equalTo("fulcrum-tiny"))
                .body("data.find { it.id == '" + id + "' }.root", equalTo("base-root"))
                .body("data.find { it.id == '" + id + "' }.owned_by", equalTo("system"))
                .body("data.find { it.id == '" + id + "' }.created", equalTo(0))
                // what a model served inside Fulcrum answers; unknown (null) for an upstream's
                .body("data.find { it.id == 'fulcrum-tiny' }.type", equalTo("llm"))
                .body("data.find { it.id == 'all-minilm-l6-v2' }.type", equalTo("embeddings"))
                .body("data.find { it.id == '" + id + "' }.type", nullValue());
    }

    @Test
    void clientDisconnectClosesTheUpstreamRequest() throws Exception {
        Account user = fixtures.user("cancel");
        String id = model("endless");
        CountDownLatch closed = new CountDownLatch(1);
        stub.closedConnections = closed;
        String body = new JsonObject().put("model", id)
                .put("messages", List.of(Map.of("role", "user", "content", "go"))).put("stream", true).encode();
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + user.key()
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.UTF_8));
            out.write(bytes);
            out.flush();
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            StringBuilder head = new StringBuilder();
            while (head.indexOf("data: ") < 0) {
                int b = in.read();
                assertTrue(b >= 0, head.toString());
                head.append((char) b);
            }
            assertTrue(head.toString().startsWith("HTTP/1.1 200"), head.toString());
            assertFalse(closed.await(200, TimeUnit.MILLISECONDS), "the upstream stream runs while the client reads");
        }
        assertTrue(closed.await(10, TimeUnit.SECONDS), "the upstream saw its connection closed");
    }

    @Test
    void adminModelIdsWithSlashesArePathSegments() {
        String id = model("echo");
        asAdmin().urlEncodingEnabled(false).get("/api/v1/admin/models/" + id.replace("/", "%2F")).then().statusCode(200)
                .body("id", equalTo(id));
    }
}

package dev.fulcrum.inference.engine.llama;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.emptyOrNullString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.inference.Inference;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.NodeScripts;
import dev.fulcrum.support.PythonClients;

/**
 * A GGUF model in the catalog, served by llama.cpp inside Fulcrum: the tiny random Llama that the Python worker writes
 * ({@code fulcrum-worker make-tiny-model --gguf}), added through the admin API, answered to the official OpenAI Python
 * SDK ({@code src/test/python/openai_sdk/gguf_e2e.py}: plain and streamed, greedy twice, seeds, stop, max_tokens,
 * json_schema and json_object, forced tool calls, tool_choice auto and none, text completions, embeddings, refusals),
 * with usage recorded for the SDK's project, and to the official Node SDK
 * ({@code src/test/node/openai-sdk/gguf-e2e.mjs}: chat plain and streamed, json_schema, a forced tool call,
 * completions, embeddings, responses).
 */
@QuarkusTest
class GgufCompletionsTest {

    static final Path WORKER = Path.of("worker").toAbsolutePath();
    static final Path TINY_GGUF = Path.of("target", "fulcrum-worker", "tiny-llama-gguf").toAbsolutePath();

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    java.net.URI base;

    @BeforeAll
    static void tinyGguf() throws Exception {
        NodeScripts.run(WORKER, Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
        if (!Files.exists(TINY_GGUF.resolve("model.gguf"))) {
            NodeScripts.run(WORKER, Duration.ofMinutes(5), Map.of(),
                    WORKER.resolve(".venv/bin/fulcrum-worker").toString(), "make-tiny-model", TINY_GGUF.toString(),
                    "--gguf");
        }
    }

    static String ggufModel(String id) {
        Inference.asAdmin()
                .body(new JsonObject().put("id", id).put("backend", "gguf")
                        .put("gguf_path", TINY_GGUF.resolve("model.gguf").toString()).put("max_tokens", 512).encode())
                .post("/api/v1/admin/models").then().statusCode(201).body("backend", equalTo("gguf"))
                .body("gguf_path", equalTo(TINY_GGUF.resolve("model.gguf").toString()));
        return id;
    }

    @Test
    void theOfficialPythonSdkChatsWithAGgufModel() throws Exception {
        Account user = fixtures.user("gguf");
        PlatformEntity team = fixtures.team("gguf-team", user);
        String model = ggufModel(Fixtures.unique("tiny/gguf"));

        String output = PythonClients.run("openai_sdk/gguf_e2e.py", Duration.ofMinutes(5), Map.of("BASE_URL",
                base.resolve("/v1").toString(), "API_KEY", user.key(), "PROJECT", team.name + "/chat", "MODEL", model));
        assertTrue(output.contains("openai-python gguf e2e: ok"), output);

        await("the SDK's completions in the usage").atMost(Duration.ofSeconds(10))
                .until(() -> io.restassured.RestAssured.given().filter(Contract.INFERENCE).auth().oauth2(user.key())
                        .queryParam("entity", team.name).queryParam("project", "chat").queryParam("group_by", "model")
                        .get("/api/v1/usage").then().statusCode(200).extract().jsonPath()
                        .getList("data.requests", Integer.class).stream().anyMatch(requests -> requests >= 15));
    }

    @Test
    void theOfficialNodeSdkUsesAGgufModel() throws Exception {
        Account user = fixtures.user("ggufnode");
        PlatformEntity team = fixtures.team("gguf-node-team", user);
        String model = ggufModel(Fixtures.unique("tiny/gguf"));
        Path scripts = Path.of("src", "test", "node", "openai-sdk");
        NodeScripts.run(scripts, Duration.ofMinutes(5), Map.of(), "npm", "ci", "--no-audit", "--no-fund");
        String output = NodeScripts.run(scripts, Duration.ofMinutes(5), Map.of("BASE_URL",
                base.resolve("/v1").toString(), "API_KEY", user.key(), "PROJECT", team.name + "/node", "MODEL", model),
                "node", "gguf-e2e.mjs");
        assertTrue(output.contains("openai-node gguf e2e: ok"), output);
    }

    @Test
    void refusalsAndLimitsAreOpenAiErrors() {
        Account user = fixtures.user("ggufbad");
        String model = ggufModel(Fixtures.unique("tiny/gguf"));
        Inference.as(user.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hi")), "max_tokens",
                        513))
                .post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("max_tokens"));
        Inference.as(user.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hi")),
                        "response_format",
                        Map.of("type", "json_schema", "json_schema",
                                Map.of("name", "x", "schema", Map.of("type", "string", "pattern", "a+")))))
                .post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("response_format.json_schema.schema"));
        Inference.as(user.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hi")),
                        "tool_choice", "required"))
                .post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("tool_choice"));
        Inference.as(user.key())
                .body(Map.of("model", model, "messages",
                        List.of(Map.of("role", "user", "content", List.of(Map.of("type", "image_url"))))))
                .post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("messages[0].content"));
        // a plain answer through the contract check
        Inference.as(user.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hi")), "max_tokens",
                        4, "temperature", 0))
                .post("/v1/chat/completions").then().statusCode(200).body("usage.prompt_tokens", greaterThan(0))
                .body("choices[0].finish_reason", equalTo("length"));
    }

    /**
     * The tiny model under DeepSeek R1's template, whose prompt opens a reasoning block the random model never closes:
     * its whole answer is reasoning, as the R1 format reads it (ChatFormatFamiliesTest reads the family's answers).
     */
    @Test
    void aReasoningFamilysBlockIsReasoningContentOrContentAsAsked() throws Exception {
        Account user = fixtures.user("ggufthink");
        Path families = Path.of("target", "chat-format-ggufs").toAbsolutePath();
        NodeScripts.run(WORKER, Duration.ofMinutes(2), Map.of(), WORKER.resolve(".venv/bin/python").toString(),
                Path.of("src/test/python/chat_formats/family_ggufs.py").toAbsolutePath().toString(),
                TINY_GGUF.resolve("model.gguf").toString(), families.toString(),
                Path.of("src/test/resources/chat-templates/deepseek-r1.jinja").toAbsolutePath().toString());
        String model = Fixtures.unique("tiny/r1");
        Inference.asAdmin()
                .body(new JsonObject().put("id", model).put("backend", "gguf")
                        .put("gguf_path", families.resolve("deepseek-r1.gguf").toString()).put("max_tokens", 64)
                        .encode())
                .post("/api/v1/admin/models").then().statusCode(201);
        Map<String, Object> ask = Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hi")),
                "max_tokens", 16, "temperature", 0);
        String thought = Inference.as(user.key()).body(ask).post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.content", nullValue())
                .body("choices[0].message.reasoning_content", not(emptyOrNullString())).extract()
                .path("choices[0].message.reasoning_content");
        // reasoning_format none: the same text, as content
        Map<String, Object> none = new java.util.HashMap<>(ask);
        none.put("reasoning_format", "none");
        Inference.as(user.key()).body(none).post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.reasoning_content", nullValue())
                .body("choices[0].message.content", containsString(thought.strip()));
        // the model's own setting, when the request does not say
        String plain = Fixtures.unique("tiny/r1-none");
        Inference.asAdmin()
                .body(new JsonObject().put("id", plain).put("backend", "gguf")
                        .put("gguf_path", families.resolve("deepseek-r1.gguf").toString()).put("max_tokens", 64)
                        .put("reasoning_format", "none").encode())
                .post("/api/v1/admin/models").then().statusCode(201);
        Map<String, Object> asPlain = new java.util.HashMap<>(ask);
        asPlain.put("model", plain);
        Inference.as(user.key()).body(asPlain).post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.reasoning_content", nullValue())
                .body("choices[0].message.content", containsString(thought.strip()));
        asPlain.put("reasoning_format", "auto");
        Inference.as(user.key()).body(asPlain).post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.reasoning_content", equalTo(thought));
        none.put("reasoning_format", "sometimes");
        Inference.as(user.key()).body(none).post("/v1/chat/completions").then().statusCode(400).body("error.param",
                equalTo("reasoning_format"));
        // streamed, it comes as reasoning_content deltas
        Map<String, Object> streamed = new java.util.HashMap<>(ask);
        streamed.put("stream", true);
        String events = Inference.as(user.key()).body(streamed).post("/v1/chat/completions").then().statusCode(200)
                .extract().asString();
        StringBuilder pieces = new StringBuilder();
        for (String line : events.split("\n")) {
            if (line.startsWith("data: {")) {
                JsonObject delta = new JsonObject(line.substring(6)).getJsonArray("choices").getJsonObject(0)
                        .getJsonObject("delta");
                pieces.append(delta.getString("reasoning_content", ""));
            }
        }
        assertEquals(thought, pieces.toString());
        // the Responses API answers it as a reasoning item before the message
        Inference.as(user.key()).body(Map.of("model", model, "input", "hi", "max_output_tokens", 16, "temperature", 0))
                .post("/v1/responses").then().statusCode(200).body("output[0].type", equalTo("reasoning"))
                .body("output[0].content[0].type", equalTo("reasoning_text"))
                .body("output[0].content[0].text", equalTo(thought)).body("output[1].type", equalTo("message"));
    }

    @Test
    void aGgufModelEmbedsHundredsOfInputsInARow() {
        // the bindings' task loop can sleep through a posted embedding (GgufBackend.embed): alone on one thread, the
        // tiny model froze within a few hundred calls before the loop was woken; 1,024 calls here, every one answered
        Account user = fixtures.user("ggufembed");
        String model = ggufModel(Fixtures.unique("tiny/gguf"));
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            inputs.add(i % 3 == 0 ? "one" : i % 3 == 1 ? "two two" : "three three three " + i);
        }
        for (int request = 0; request < 4; request++) {
            Inference.as(user.key()).body(Map.of("model", model, "input", inputs)).post("/v1/embeddings").then()
                    .statusCode(200).body("data.size()", equalTo(inputs.size())).body("data[255].index", equalTo(255))
                    .body("usage.prompt_tokens", greaterThan(inputs.size()));
        }
    }

    @Test
    void theAdminApiAsksForAGgufFile() {
        Inference.asAdmin()
                .body(new JsonObject().put("id", Fixtures.unique("tiny/gguf")).put("backend", "gguf").encode())
                .post("/api/v1/admin/models").then().statusCode(422);
        Inference.asAdmin()
                .body(new JsonObject().put("id", Fixtures.unique("x")).put("backend", "openai-compatible")
                        .put("base_url", "http://127.0.0.1:9/v1").put("gguf_path", "/tmp/x.gguf").encode())
                .post("/api/v1/admin/models").then().statusCode(422);
        // a file that cannot be read: 503 when the model is first used, in the OpenAI error shape
        String missing = Fixtures.unique("tiny/missing");
        Inference
                .asAdmin().body(new JsonObject().put("id", missing).put("backend", "gguf")
                        .put("gguf_path", "/nonexistent/m.gguf").encode())
                .post("/api/v1/admin/models").then().statusCode(201);
        Inference.as(fixtures.user("ggufmissing").key()).body(Inference.chat(missing, "hi"))
                .post("/v1/chat/completions").then().statusCode(503).body("error.code", equalTo("model_unavailable"));
    }
}

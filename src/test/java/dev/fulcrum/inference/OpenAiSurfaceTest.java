package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.events;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The OpenAI surface beyond chat: text completions, embeddings and responses, on the built-in model, the local
 * embedding model and an OpenAI-compatible upstream (a real HTTP server started here), every answer checked against
 * {@code openapi/inference.yaml}.
 */
@QuarkusTest
class OpenAiSurfaceTest {

    private static final String TINY = "fulcrum-tiny";
    private static final String MINILM = "all-minilm-l6-v2";

    static OpenAiStub stub;

    @Inject
    Fixtures fixtures;

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
    }

    private static String upstream(String upstreamModel) {
        String id = Fixtures.unique("org/" + upstreamModel);
        Inference.upstreamModel(id, stub, upstreamModel, Map.of());
        return id;
    }

    private static float[] vector(JsonPath answer, int index) {
        List<Float> values = answer.getList("data[" + index + "].embedding", Float.class);
        float[] vector = new float[values.size()];
        for (int i = 0; i < vector.length; i++) {
            vector[i] = values.get(i);
        }
        return vector;
    }

    private static double dot(float[] a, float[] b) {
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += a[i] * b[i];
        }
        return sum;
    }

    // text completions

    @Test
    void builtinModelContinuesAPromptPlainAndStreamed() {
        Account user = fixtures.user("cmpl");
        Map<String, Object> body = Map.of("model", TINY, "prompt", "Once upon a time", "max_tokens", 12, "seed", 3);
        String text = as(user.key()).body(body).post("/v1/completions").then().statusCode(200)
                .body("object", equalTo("text_completion")).body("model", equalTo(TINY)).body("choices", hasSize(1))
                .body("choices[0].index", equalTo(0)).body("usage.prompt_tokens", equalTo(16))
                .body("usage.completion_tokens", greaterThan(0)).extract().path("choices[0].text");
        // the same seed gives the same text, streamed piece by piece
        Map<String, Object> streamed = new java.util.HashMap<>(body);
        streamed.put("stream", true);
        streamed.put("stream_options", Map.of("include_usage", true));
        String stream = as(user.key()).body(streamed).post("/v1/completions").then().statusCode(200)
                .contentType(containsString("text/event-stream")).extract().asString();
        List<String> events = events(stream);
        assertEquals("[DONE]", events.get(events.size() - 1));
        StringBuilder joined = new StringBuilder();
        JsonObject usage = null;
        String finish = null;
        for (String event : events.subList(0, events.size() - 1)) {
            JsonObject chunk = new JsonObject(event);
            assertEquals("text_completion", chunk.getString("object"));
            if (chunk.getJsonArray("choices").isEmpty()) {
                usage = chunk.getJsonObject("usage");
                continue;
            }
            JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
            joined.append(choice.getString("text"));
            finish = choice.getString("finish_reason", finish);
        }
        assertEquals(text, joined.toString());
        assertTrue(finish.equals("length") || finish.equals("stop"), finish);
        assertEquals(16, usage.getInteger("prompt_tokens"));
        // echo, several prompts and n: choice p * n + i
        as(user.key()).body(Map.of("model", TINY, "prompt", List.of("a", "b"), "n", 2, "max_tokens", 2, "echo", true))
                .post("/v1/completions").then().statusCode(200).body("choices", hasSize(4))
                .body("choices[0].text", org.hamcrest.Matchers.startsWith("a"))
                .body("choices[3].text", org.hamcrest.Matchers.startsWith("b")).body("choices[3].index", equalTo(3));
    }

    @Test
    void textCompletionRefusals() {
        Account user = fixtures.user("cmpl");
        as(user.key()).body(Map.of("model", TINY)).post("/v1/completions").then().statusCode(400).body("error.param",
                equalTo("prompt"));
        as(user.key()).body(Map.of("model", TINY, "prompt", List.of(1, 2, 3))).post("/v1/completions").then()
                .statusCode(400).body("error.param", equalTo("prompt"));
        as(user.key()).body(Map.of("model", TINY, "prompt", "x", "logprobs", 2)).post("/v1/completions").then()
                .statusCode(400).body("error.param", equalTo("logprobs"))
                .body("error.code", equalTo("unsupported_parameter"));
        as(user.key()).body(Map.of("model", TINY, "prompt", "x", "max_tokens", 5000)).post("/v1/completions").then()
                .statusCode(400).body("error.param", equalTo("max_tokens"));
        as(user.key()).body(Map.of("model", TINY, "prompt", "x", "max_tokens", 0, "echo", true)).post("/v1/completions")
                .then().statusCode(400).body("error.param", equalTo("max_tokens"));
        as(user.key()).body(Map.of("model", MINILM, "prompt", "x")).post("/v1/completions").then().statusCode(400)
                .body("error.param", equalTo("model")).body("error.code", equalTo("model_not_supported"));
        as(user.key()).body(Map.of("model", "no-such-model", "prompt", "x")).post("/v1/completions").then()
                .statusCode(404).body("error.code", equalTo("model_not_found"));
        as("not-a-key").body(Map.of("model", TINY, "prompt", "x")).post("/v1/completions").then().statusCode(401)
                .body("error.code", equalTo("invalid_api_key"));
    }

    @Test
    void upstreamTextCompletionsArePassedThrough() {
        Account user = fixtures.user("cmpl");
        String id = upstream("echo");
        as(user.key()).body(Map.of("model", id, "prompt", List.of(1, 2, 3), "max_tokens", 5, "vendor", true))
                .post("/v1/completions").then().statusCode(200).body("model", equalTo(id))
                .body("choices[0].text", equalTo(OpenAiStub.ANSWER)).body("usage.total_tokens", equalTo(9));
        assertEquals("/v1/completions", stub.paths.get(stub.paths.size() - 1));
        assertEquals("echo", stub.lastRequest().getString("model"));
        assertEquals(new JsonArray().add(1).add(2).add(3), stub.lastRequest().getJsonArray("prompt"));
        assertTrue(stub.lastRequest().getBoolean("vendor"));
        // lm-eval's scoring request goes as sent: vLLM scores the prompt itself
        as(user.key()).body(Map.of("model", id, "prompt", List.of(List.of(5, 6)), "max_tokens", 0, "logprobs", 1,
                "echo", true, "temperature", 0)).post("/v1/completions").then().statusCode(200);
        JsonObject scoring = stub.lastRequest();
        assertEquals(0, scoring.getInteger("max_tokens"));
        assertEquals(1, scoring.getInteger("logprobs"));
        assertTrue(scoring.getBoolean("echo"));
        String stream = as(user.key()).body(Map.of("model", id, "prompt", "Hi", "stream", true)).post("/v1/completions")
                .then().statusCode(200).extract().asString();
        List<String> events = events(stream);
        assertEquals("[DONE]", events.get(events.size() - 1));
        StringBuilder text = new StringBuilder();
        for (String event : events.subList(0, events.size() - 1)) {
            JsonObject chunk = new JsonObject(event);
            assertEquals(id, chunk.getString("model"));
            text.append(chunk.getJsonArray("choices").getJsonObject(0).getString("text"));
        }
        assertEquals(OpenAiStub.ANSWER, text.toString(), "the usage chunk Fulcrum asked for is not passed on");
        assertTrue(stub.lastRequest().getJsonObject("stream_options").getBoolean("include_usage"));
    }

    // embeddings

    @Test
    void localEmbeddingModelPutsParaphrasesCloserThanAnUnrelatedSentence() {
        Account user = fixtures.user("emb");
        PlatformEntity team = fixtures.team("emb-team", user);
        JsonPath answer = as(user.key()).header("OpenAI-Project", team.name + "/search")
                .body(Map.of("model", MINILM, "input",
                        List.of("The cat sits on the mat.", "A cat is sitting on a rug.",
                                "Quarterly interest rates rose sharply.")))
                .post("/v1/embeddings").then().statusCode(200).body("object", equalTo("list"))
                .body("model", equalTo(MINILM)).body("data", hasSize(3)).body("data[2].index", equalTo(2))
                .body("data[0].object", equalTo("embedding")).body("data[0].embedding", hasSize(384))
                .body("usage.prompt_tokens", greaterThan(10)).extract().jsonPath();
        float[] cat = vector(answer, 0);
        float[] paraphrase = vector(answer, 1);
        float[] rates = vector(answer, 2);
        assertEquals(1.0, dot(cat, cat), 1e-3, "unit vectors");
        double close = dot(cat, paraphrase);
        double far = dot(cat, rates);
        assertTrue(close > far + 0.3, "paraphrases " + close + " vs unrelated " + far);
        // base64: the same vectors as little-endian float32
        String encoded = as(user.key())
                .body(Map.of("model", MINILM, "input", "The cat sits on the mat.", "encoding_format", "base64"))
                .post("/v1/embeddings").then().statusCode(200).extract().path("data[0].embedding");
        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(encoded)).order(ByteOrder.LITTLE_ENDIAN);
        float[] decoded = new float[384];
        bytes.asFloatBuffer().get(decoded);
        assertArrayEquals(cat, decoded, 1e-6f);
        // counted for the team's project
        await("the embeddings in the usage").atMost(Duration.ofSeconds(10))
                .until(() -> given().filter(Contract.INFERENCE).auth().oauth2(user.key())
                        .queryParam("entity", team.name).queryParam("project", "search").get("/api/v1/usage").then()
                        .statusCode(200).extract().jsonPath().getList("data.requests", Integer.class)
                        .equals(List.of(1)));
    }

    @Test
    void embeddingRefusals() {
        Account user = fixtures.user("emb");
        as(user.key()).body(Map.of("model", MINILM, "input", "x", "dimensions", 64)).post("/v1/embeddings").then()
                .statusCode(400).body("error.param", equalTo("dimensions"));
        as(user.key()).body(Map.of("model", MINILM, "input", "x", "dimensions", 384)).post("/v1/embeddings").then()
                .statusCode(200);
        as(user.key()).body(Map.of("model", MINILM, "input", List.of(List.of(1, 2)))).post("/v1/embeddings").then()
                .statusCode(400).body("error.param", equalTo("input"));
        as(user.key()).body(Map.of("model", MINILM, "input", "")).post("/v1/embeddings").then().statusCode(400)
                .body("error.param", equalTo("input"));
        as(user.key()).body(Map.of("model", MINILM, "input", "x", "encoding_format", "int8")).post("/v1/embeddings")
                .then().statusCode(400).body("error.param", equalTo("encoding_format"));
        as(user.key()).body(Map.of("model", TINY, "input", "x")).post("/v1/embeddings").then().statusCode(400)
                .body("error.code", equalTo("model_not_supported"));
        as(user.key()).body(Inference.chat(MINILM, "Hi")).post("/v1/chat/completions").then().statusCode(400)
                .body("error.code", equalTo("model_not_supported"));
        as(null).body(Map.of("model", MINILM, "input", "x")).post("/v1/embeddings").then().statusCode(401);
    }

    @Test
    void upstreamEmbeddingsArePassedThrough() {
        Account user = fixtures.user("emb");
        String id = upstream("echo");
        as(user.key()).body(Map.of("model", id, "input", List.of(List.of(1, 2), List.of(3)), "dimensions", 2))
                .post("/v1/embeddings").then().statusCode(200).body("model", equalTo(id)).body("data", hasSize(2))
                .body("data[1].embedding[0]", equalTo(1.0f)).body("usage.prompt_tokens", equalTo(6));
        assertEquals("/v1/embeddings", stub.paths.get(stub.paths.size() - 1));
        assertEquals(2, stub.lastRequest().getInteger("dimensions"));
    }

    // responses

    private static List<JsonObject> responseEvents(String stream) {
        List<JsonObject> events = new ArrayList<>();
        for (String block : stream.split("\n\n")) {
            String type = null;
            for (String line : block.split("\n")) {
                if (line.startsWith("event: ")) {
                    type = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    JsonObject data = new JsonObject(line.substring(6));
                    assertEquals(type, data.getString("type"), "event and type agree");
                    events.add(data);
                }
            }
        }
        return events;
    }

    @Test
    void builtinModelAnswersResponsesThroughTheBridge() {
        Account user = fixtures.user("resp");
        Map<String, Object> body = Map.of("model", TINY, "input", "Hi", "instructions", "Be brief.",
                "max_output_tokens", 16, "temperature", 0);
        JsonPath plain = as(user.key()).body(body).post("/v1/responses").then().statusCode(200)
                .body("object", equalTo("response")).body("model", equalTo(TINY)).body("store", equalTo(false))
                .body("output[0].type", equalTo("message")).body("output[0].role", equalTo("assistant"))
                .body("output[0].content[0].type", equalTo("output_text")).body("usage.input_tokens", greaterThan(0))
                .extract().jsonPath();
        String text = plain.getString("output[0].content[0].text");
        String status = plain.getString("status");
        assertTrue(status.equals("completed") || status.equals("incomplete"), status);

        Map<String, Object> streamed = new java.util.HashMap<>(body);
        streamed.put("stream", true);
        String stream = as(user.key()).body(streamed).post("/v1/responses").then().statusCode(200)
                .contentType(containsString("text/event-stream")).extract().asString();
        List<JsonObject> events = responseEvents(stream);
        List<String> types = events.stream().map(e -> e.getString("type")).distinct().toList();
        assertEquals("response.created", types.get(0));
        assertEquals(List.of("response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added", "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done",
                status.equals("completed") ? "response.completed" : "response.incomplete"), types);
        for (int i = 0; i < events.size(); i++) {
            assertEquals(i, events.get(i).getInteger("sequence_number"));
        }
        StringBuilder deltas = new StringBuilder();
        events.stream().filter(e -> e.getString("type").equals("response.output_text.delta"))
                .forEach(e -> deltas.append(e.getString("delta")));
        assertEquals(text, deltas.toString(), "greedy: the same text plain and streamed");
        JsonObject last = events.get(events.size() - 1).getJsonObject("response");
        assertEquals(text, last.getJsonArray("output").getJsonObject(0).getJsonArray("content").getJsonObject(0)
                .getString("text"));
        assertEquals(plain.getInt("usage.output_tokens"), last.getJsonObject("usage").getInteger("output_tokens"));
        assertFalse(stream.contains("[DONE]"));
    }

    @Test
    void theStatelessBridgeRefusesWhatNeedsState() {
        Account user = fixtures.user("resp");
        for (Map.Entry<String, Object> field : List.of(Map.<String, Object> entry("previous_response_id", "resp_1"),
                Map.<String, Object> entry("store", true), Map.<String, Object> entry("background", true))) {
            as(user.key()).body(Map.of("model", TINY, "input", "Hi", field.getKey(), field.getValue()))
                    .post("/v1/responses").then().statusCode(400).body("error.param", equalTo(field.getKey()))
                    .body("error.code", equalTo("unsupported_parameter"));
        }
        // OpenAI's own tools run on its servers; function tools need a model that takes tools (not the built-in one)
        as(user.key()).body(Map.of("model", TINY, "input", "Hi", "tools", List.of(Map.of("type", "web_search"))))
                .post("/v1/responses").then().statusCode(400).body("error.param", equalTo("tools[0].type"))
                .body("error.code", equalTo("unsupported_parameter"));
        as(user.key())
                .body(Map.of("model", TINY, "input", "Hi", "tools",
                        List.of(Map.of("type", "function", "name", "f", "parameters", Map.of("type", "object")))))
                .post("/v1/responses").then().statusCode(400).body("error.param", equalTo("tools"))
                .body("error.code", equalTo("unsupported_parameter"));
        as(user.key()).body(Map.of("model", TINY, "input", "Hi", "max_output_tokens", 4)).post("/v1/responses").then()
                .statusCode(400).body("error.param", equalTo("max_output_tokens"));
        as(user.key())
                .body(Map.of("model", TINY, "input", "Hi", "text", Map.of("format", Map.of("type", "json_object"))))
                .post("/v1/responses").then().statusCode(400).body("error.param", equalTo("text.format"));
        as(user.key()).body(Map.of("model", TINY, "input", List.of(Map.of("type", "reasoning")))).post("/v1/responses")
                .then().statusCode(400).body("error.param", equalTo("input[0].type"));
        as(user.key()).body(Map.of("model", TINY, "input", List.of(Map.of("type", "function_call_output"))))
                .post("/v1/responses").then().statusCode(400).body("error.param", equalTo("input[0].call_id"));
        as(user.key()).body(Map.of("model", TINY)).post("/v1/responses").then().statusCode(400).body("error.param",
                equalTo("input"));
        as(user.key()).body(Map.of("model", MINILM, "input", "Hi")).post("/v1/responses").then().statusCode(400)
                .body("error.code", equalTo("model_not_supported"));
    }

    @Test
    void upstreamWithoutTheResponsesApiIsBridgedAndOneWithItPassedThrough() {
        Account user = fixtures.user("resp");
        String bridged = upstream("echo");
        List<Object> input = List
                .of(Map.of("role", "user", "content", List.of(Map.of("type", "input_text", "text", "Hello"))));
        as(user.key()).body(Map.of("model", bridged, "input", input, "instructions", "Be kind")).post("/v1/responses")
                .then().statusCode(200).body("model", equalTo(bridged)).body("status", equalTo("completed"))
                .body("output[0].content[0].text", equalTo(OpenAiStub.ANSWER)).body("usage.input_tokens", equalTo(11))
                .body("usage.output_tokens", equalTo(5));
        JsonObject chat = stub.lastRequest();
        assertEquals("/v1/chat/completions", stub.paths.get(stub.paths.size() - 1));
        assertEquals("system", chat.getJsonArray("messages").getJsonObject(0).getString("role"));
        assertEquals("Hello", chat.getJsonArray("messages").getJsonObject(1).getString("content"));
        int asked = stub.paths.size();
        // the server's 404 is remembered: the next request goes to chat completions at once
        String stream = as(user.key()).body(Map.of("model", bridged, "input", "Hi", "stream", true))
                .post("/v1/responses").then().statusCode(200).extract().asString();
        assertEquals(List.of("/v1/chat/completions"), stub.paths.subList(asked, stub.paths.size()));
        StringBuilder deltas = new StringBuilder();
        List<JsonObject> events = responseEvents(stream);
        events.stream().filter(e -> e.getString("type").equals("response.output_text.delta"))
                .forEach(e -> deltas.append(e.getString("delta")));
        assertEquals(OpenAiStub.ANSWER, deltas.toString());
        assertEquals("response.completed", events.get(events.size() - 1).getString("type"));
        assertEquals(3, events.get(events.size() - 1).getJsonObject("response").getJsonObject("usage")
                .getInteger("output_tokens"));

        String direct = upstream("responder");
        as(user.key()).body(Map.of("model", direct, "input", "Hi", "previous_response_id", "resp_0"))
                .post("/v1/responses").then().statusCode(200).body("model", equalTo(direct))
                .body("id", equalTo("resp_stub")).body("output[0].content[0].text", equalTo(OpenAiStub.ANSWER));
        assertEquals("/v1/responses", stub.paths.get(stub.paths.size() - 1));
        assertEquals("resp_0", stub.lastRequest().getString("previous_response_id"), "passed through as sent");
        String passed = as(user.key()).body(Map.of("model", direct, "input", "Hi", "stream", true))
                .post("/v1/responses").then().statusCode(200).extract().asString();
        List<JsonObject> upstreamEvents = responseEvents(passed);
        assertEquals("response.completed", upstreamEvents.get(upstreamEvents.size() - 1).getString("type"));
        assertEquals(direct, upstreamEvents.get(0).getJsonObject("response").getString("model"));
    }
}

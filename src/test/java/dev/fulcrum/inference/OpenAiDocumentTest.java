package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.swagger.v3.oas.models.media.Schema;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.RealModels;

/**
 * Fulcrum's OpenAI API judged by OpenAI's own published document ({@link OpenAiDocument}: {@code openai/openai-openapi}
 * 2.3.0, pinned): realistic requests as the OpenAI SDKs and their users send them (chat plain and streamed, tools,
 * logprobs, {@code n}, stop, {@code response_format}, text completions, embeddings, Responses, the model list and one
 * model), to the built-in model where the words do not matter and to SmolLM2 (a real GGUF model) where they do, each
 * answer and each streamed chunk or event validated against the schema the document gives it; where OpenAI's API itself
 * answers otherwise than its document, {@link OpenAiDocument#GAPS} says so and why. Every answer is also checked
 * against Fulcrum's own contract ({@code Contract.INFERENCE}).
 */
@QuarkusTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OpenAiDocumentTest {

    private static final String TINY = "fulcrum-tiny";
    private static final String MINILM = "all-minilm-l6-v2";
    /** A tool whose call is short (a city of two), so that a forced call is quick to generate. */
    private static final Map<String, Object> WEATHER = Map.of("type", "function", "function",
            Map.of("name", "get_weather", "description", "The current weather of a city", "parameters",
                    Map.of("type", "object", "properties",
                            Map.of("city", Map.of("type", "string", "enum", List.of("Paris", "Oslo"))), "required",
                            List.of("city"))));

    static OpenAiDocument document;
    static String smolLm2File;
    static String smolLm2;

    @Inject
    Fixtures fixtures;

    private String key;

    @BeforeAll
    static void document() throws Exception {
        document = new OpenAiDocument();
        smolLm2File = RealModels.smolLm2().toString();
    }

    @BeforeEach
    void user() {
        key = fixtures.user("openai-doc").key();
        if (smolLm2 == null) {
            smolLm2 = Fixtures.unique("hf/smollm2");
            Inference
                    .asAdmin().body(new JsonObject().put("id", smolLm2).put("backend", "gguf")
                            .put("gguf_path", smolLm2File).put("max_tokens", 256).encode())
                    .post("/api/v1/admin/models").then().statusCode(201);
        }
    }

    // the judge itself

    @Test
    @Order(1)
    void theDocumentRefusesWhatItForbids() {
        JsonObject message = new JsonObject().put("role", "assistant").put("content", "Hi").putNull("refusal");
        JsonObject completion = new JsonObject().put("id", "chatcmpl-1").put("object", "chat.completion")
                .put("created", 1).put("model", TINY).put("choices", new JsonArray().add(new JsonObject()
                        .put("index", 0).put("message", message).putNull("logprobs").put("finish_reason", "stop")));
        Schema<?> schema = document.answerSchema("POST /chat/completions", "application/json");
        assertEquals(List.of(), judge("POST /chat/completions", "application/json", schema, completion.encode()));
        // a required field missing, a wrong type, a value out of an enum, a null where none may be
        JsonObject noRefusal = completion.copy();
        noRefusal.getJsonArray("choices").getJsonObject(0).getJsonObject("message").remove("refusal");
        JsonObject textCreated = completion.copy().put("created", "yesterday");
        JsonObject badReason = completion.copy();
        badReason.getJsonArray("choices").getJsonObject(0).put("finish_reason", "tired");
        JsonObject nullId = completion.copy().putNull("id");
        for (JsonObject wrong : List.of(noRefusal, textCreated, badReason, nullId)) {
            assertFalse(judge("POST /chat/completions", "application/json", schema, wrong.encode()).isEmpty(),
                    wrong.encode());
        }
        // the Responses API's usage may be absent, never null
        JsonObject response = new JsonObject().put("id", "resp_1").put("object", "response").put("created_at", 1)
                .put("status", "in_progress").putNull("error").putNull("incomplete_details").putNull("instructions")
                .put("model", TINY).put("output", new JsonArray()).put("parallel_tool_calls", true)
                .put("metadata", new JsonObject()).put("temperature", 1.0).put("top_p", 1.0).put("tool_choice", "auto")
                .put("tools", new JsonArray());
        Schema<?> created = document.component(document.responseEventSchemas().get("response.created"));
        JsonObject event = new JsonObject().put("type", "response.created").put("sequence_number", 0).put("response",
                response);
        assertEquals(List.of(), judge("POST /responses", "text/event-stream", created, event.encode()));
        response.putNull("usage");
        assertFalse(judge("POST /responses", "text/event-stream", created, event.encode()).isEmpty(), event.encode());
    }

    // chat completions

    @Test
    @Order(2)
    void chatCompletionsOfTheBuiltinModel() {
        JsonObject plain = chat(
                Map.of("model", TINY, "messages", List.of(Map.of("role", "system", "content", "You are terse."),
                        Map.of("role", "user", "content", "Say hello")), "max_tokens", 8, "seed", 1));
        JsonObject message = plain.getJsonArray("choices").getJsonObject(0).getJsonObject("message");
        assertTrue(message.containsKey("refusal"), plain.encode());
        assertNull(message.getValue("refusal"));

        chat(Map.of("model", TINY, "messages", List.of(Map.of("role", "user", "content", "Count")), "n", 2, "stop",
                List.of("\n", "."), "temperature", 0.7, "top_p", 0.9, "max_completion_tokens", 6, "seed", 7, "user",
                "u-1", "metadata", Map.of("k", "v")));
        // a whole number written as a float is an integer to JSON Schema and to OpenAI's API
        JsonObject floats = chat(Map.of("model", TINY, "messages", List.of(Map.of("role", "user", "content", "Hi")),
                "n", 2.0, "max_tokens", 4.0, "seed", 3.0));
        assertEquals(2, floats.getJsonArray("choices").size());

        JsonObject logprobs = chat(Map.of("model", TINY, "messages", List.of(Map.of("role", "user", "content", "Hi")),
                "max_tokens", 4, "logprobs", true, "top_logprobs", 2));
        JsonObject choiceLogprobs = logprobs.getJsonArray("choices").getJsonObject(0).getJsonObject("logprobs");
        assertFalse(choiceLogprobs.getJsonArray("content").isEmpty(), logprobs.encode());
        assertTrue(choiceLogprobs.containsKey("refusal"), logprobs.encode());

        List<JsonObject> chunks = stream("POST /chat/completions", "/v1/chat/completions",
                Map.of("model", TINY, "messages", List.of(Map.of("role", "user", "content", "Tell me a story")),
                        "max_tokens", 12, "stream", true, "stream_options", Map.of("include_usage", true)));
        assertTrue(chunks.get(chunks.size() - 1).containsKey("usage"));

        List<JsonObject> withLogprobs = stream("POST /chat/completions", "/v1/chat/completions",
                Map.of("model", TINY, "messages", List.of(Map.of("role", "user", "content", "Hi")), "max_tokens", 6,
                        "stream", true, "logprobs", true, "top_logprobs", 1));
        assertTrue(
                withLogprobs.stream().map(chunk -> chunk.getJsonArray("choices")).filter(choices -> !choices.isEmpty())
                        .map(choices -> choices.getJsonObject(0).getJsonObject("logprobs")).filter(l -> l != null)
                        .allMatch(l -> l.containsKey("refusal")));
    }

    @Test
    @Order(3)
    void chatCompletionsOfSmolLm2() {
        Map<String, Object> ask = Map.of("model", smolLm2, "temperature", 0, "max_tokens", 64, "messages",
                List.of(Map.of("role", "user", "content", "What is the weather in Paris?")), "tools", List.of(WEATHER));
        JsonObject forced = chat(with(ask, "tool_choice", "required"));
        JsonObject call = forced.getJsonArray("choices").getJsonObject(0).getJsonObject("message")
                .getJsonArray("tool_calls").getJsonObject(0);
        assertEquals("get_weather", call.getJsonObject("function").getString("name"));
        chat(with(with(ask, "tool_choice", "auto"), "max_tokens", 12));
        stream("POST /chat/completions", "/v1/chat/completions",
                with(with(ask, "tool_choice", Map.of("type", "function", "function", Map.of("name", "get_weather"))),
                        "stream", true));

        // a function's answer in the deprecated shapes: an assistant's function_call, then a function message
        chat(Map.of("model", smolLm2, "temperature", 0, "max_tokens", 16, "tools", List.of(WEATHER), "messages",
                List.of(Map.of("role", "user", "content", "What is the weather in Paris?"),
                        Map.of("role", "assistant", "content", "", "function_call",
                                Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\"}")),
                        Map.of("role", "function", "name", "get_weather", "content", "18 C and sunny"))));

        Map<String, Object> json = Map.of("model", smolLm2, "temperature", 0, "max_tokens", 32, "messages",
                List.of(Map.of("role", "user", "content", "Give the capital of France as JSON")));
        chat(with(json, "response_format",
                Map.of("type", "json_schema", "json_schema",
                        Map.of("name", "capital", "strict", true, "schema",
                                Map.of("type", "object", "properties", Map.of("capital", Map.of("type", "string")),
                                        "required", List.of("capital"), "additionalProperties", false)))));
        // only the name is required: without a schema the answer is any JSON
        JsonObject anyJson = chat(
                with(with(json, "response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "any"))),
                        "max_tokens", 16));
        String content = anyJson.getJsonArray("choices").getJsonObject(0).getJsonObject("message").getString("content");
        if ("stop".equals(anyJson.getJsonArray("choices").getJsonObject(0).getString("finish_reason"))) {
            io.vertx.core.json.Json.decodeValue(content);
        }
        chat(with(with(json, "response_format", Map.of("type", "json_object")), "max_tokens", 16));

        stream("POST /chat/completions", "/v1/chat/completions",
                Map.of("model", smolLm2, "temperature", 0, "max_tokens", 8, "stream", true, "logprobs", true,
                        "top_logprobs", 3, "messages", List.of(Map.of("role", "user", "content", "Hello!"))));
    }

    // text completions

    @Test
    @Order(4)
    void textCompletions() {
        completion(Map.of("model", TINY, "prompt", "Once upon a time", "max_tokens", 8, "seed", 2));
        completion(Map.of("model", TINY, "prompt", List.of("Roses are red", "Violets are"), "n", 2, "best_of", 2,
                "max_tokens", 6, "stop", "\n", "echo", true));
        // OpenAI's default prompt: the beginning of a new document
        Map<String, Object> nullPrompt = new HashMap<>(Map.of("model", TINY, "max_tokens", 4));
        nullPrompt.put("prompt", null);
        completion(nullPrompt);
        stream("POST /completions", "/v1/completions", Map.of("model", TINY, "prompt", "The sky is", "max_tokens", 6,
                "stream", true, "stream_options", Map.of("include_usage", true)));
        completion(Map.of("model", smolLm2, "prompt", "The capital of France is", "max_tokens", 4, "temperature", 0,
                "logprobs", 2));
        // lm-eval's scoring: the prompt's own log probabilities, and the prompt alone
        completion(Map.of("model", smolLm2, "prompt", "The capital of France is Paris", "max_tokens", 1, "temperature",
                0, "logprobs", 1, "echo", true));
        completion(Map.of("model", smolLm2, "prompt", "The capital of France is Paris", "max_tokens", 0, "logprobs", 1,
                "echo", true));
    }

    @Test
    @Order(5)
    void tokenArraysAreAGgufModelsOwnIds() {
        // token ids are the model's own: greedy, they continue as the text they are continues
        List<Integer> ids = List.of(504, 3575, 282, 4649, 314);
        JsonObject tokens = completion(
                Map.of("model", smolLm2, "prompt", ids, "max_tokens", 6, "temperature", 0, "echo", true));
        JsonObject choice = tokens.getJsonArray("choices").getJsonObject(0);
        assertEquals(ids.size(), tokens.getJsonObject("usage").getInteger("prompt_tokens"), tokens.encode());
        JsonObject texts = completion(Map.of("model", smolLm2, "prompt", List.of(List.of(504, 3575), ids), "max_tokens",
                6, "temperature", 0));
        String continued = texts.getJsonArray("choices").getJsonObject(1).getString("text");
        assertTrue(choice.getString("text").endsWith(continued), tokens.encode() + " / " + texts.encode());
        String echoed = choice.getString("text").substring(0, choice.getString("text").length() - continued.length());
        JsonObject text = completion(Map.of("model", smolLm2, "prompt", echoed, "max_tokens", 6, "temperature", 0));
        assertEquals(continued, text.getJsonArray("choices").getJsonObject(0).getString("text"),
                "the ids " + ids + " read '" + echoed + "'");

        embedding(Map.of("model", smolLm2, "input", ids));
        embedding(Map.of("model", smolLm2, "input", List.of(ids, List.of(504))));
        for (Map<String, Object> outside : List.of(
                Map.<String, Object> of("model", smolLm2, "prompt", List.of(504, 1 << 30)),
                Map.<String, Object> of("model", smolLm2, "input", List.of(-1)))) {
            String path = outside.containsKey("prompt") ? "/v1/completions" : "/v1/embeddings";
            Response refused = as(key).body(new JsonObject(outside).encode()).post(path);
            assertEquals(400, refused.statusCode(), refused.asString());
            assertEquals(outside.containsKey("prompt") ? "prompt" : "input",
                    refused.jsonPath().getString("error.param"));
            assertEquals(List.of(), judge(path.equals("/v1/completions") ? "POST /completions" : "POST /embeddings",
                    "application/json", document.component("ErrorResponse"), refused.asString()));
        }
    }

    // embeddings

    @Test
    @Order(6)
    void embeddings() {
        embedding(Map.of("model", MINILM, "input", "The food was delicious"));
        embedding(Map.of("model", MINILM, "input", List.of("first", "second"), "encoding_format", "float"));
        embedding(Map.of("model", MINILM, "input", "base64 please", "encoding_format", "base64"));
        embedding(Map.of("model", smolLm2, "input", List.of("a GGUF model embeds too")));
    }

    // models

    @Test
    @Order(7)
    void modelsListedAndRetrieved() {
        Response list = as(key).get("/v1/models");
        assertEquals(200, list.statusCode(), list.asString());
        assertEquals(List.of(), judge("GET /models", "application/json",
                document.answerSchema("GET /models", "application/json"), list.asString()));
        for (String id : List.of(TINY, smolLm2)) {
            Response one = as(key).get("/v1/models/" + id);
            assertEquals(200, one.statusCode(), one.asString());
            assertEquals(id, one.jsonPath().getString("id"));
            assertEquals(List.of(), judge("GET /models/{model}", "application/json",
                    document.answerSchema("GET /models/{model}", "application/json"), one.asString()));
        }
        Response unknown = as(key).get("/v1/models/no-such-model");
        assertEquals(404, unknown.statusCode());
        assertEquals("model_not_found", unknown.jsonPath().getString("error.code"));
        assertEquals(List.of(), judge("GET /models/{model}", "application/json", document.component("ErrorResponse"),
                unknown.asString()));
    }

    // responses

    @Test
    @Order(8)
    void responses() {
        JsonObject plain = response(Map.of("model", TINY, "input", "Say hello", "max_output_tokens", 16));
        assertFalse(plain.containsKey("user"), plain.encode());
        response(Map.of("model", TINY, "instructions", "You are terse.", "user", "u-1", "metadata", Map.of("k", "v"),
                "temperature", 0.5, "input",
                List.of(Map.of("role", "user", "content", "Hi"), Map.of("role", "assistant", "content", "Hello"),
                        Map.of("type", "message", "role", "user", "content",
                                List.of(Map.of("type", "input_text", "text", "And now?"))))));
        List<JsonObject> events = stream("POST /responses", "/v1/responses",
                Map.of("model", TINY, "input", "Tell me a story", "max_output_tokens", 16, "stream", true));
        assertEquals("response.created", events.get(0).getString("type"));
        response(Map.of("model", smolLm2, "input", "Give the capital of France as JSON", "max_output_tokens", 40,
                "temperature", 0, "text",
                Map.of("format", Map.of("type", "json_schema", "name", "capital", "schema", Map.of("type", "object",
                        "properties", Map.of("capital", Map.of("type", "string")), "required", List.of("capital"))))));
    }

    /** The OpenAI Agents SDK's way: function tools, the call answered, its output sent back as input items. */
    @Test
    @Order(9)
    void responsesWithFunctionTools() {
        Map<String, Object> tool = Map.of("type", "function", "name", "get_weather", "description",
                "The current weather of a city", "strict", true, "parameters",
                Map.of("type", "object", "properties",
                        Map.of("city", Map.of("type", "string", "enum", List.of("Paris", "Oslo"))), "required",
                        List.of("city"), "additionalProperties", false));
        Map<String, Object> ask = Map.of("model", smolLm2, "input", "What is the weather in Paris?", "tools",
                List.of(tool), "tool_choice", "required", "temperature", 0, "max_output_tokens", 96);
        JsonObject called = response(ask);
        JsonObject call = called.getJsonArray("output").getJsonObject(called.getJsonArray("output").size() - 1);
        assertEquals("function_call", call.getString("type"), called.encode());
        assertEquals("get_weather", call.getString("name"));
        new JsonObject(call.getString("arguments"));
        assertEquals("get_weather", called.getJsonArray("tools").getJsonObject(0).getString("name"));

        List<JsonObject> events = stream("POST /responses", "/v1/responses",
                with(with(ask, "stream", true), "tool_choice", Map.of("type", "function", "name", "get_weather")));
        List<String> types = events.stream().map(e -> e.getString("type")).toList();
        assertTrue(
                types.containsAll(List.of("response.output_item.added", "response.function_call_arguments.delta",
                        "response.function_call_arguments.done", "response.output_item.done", "response.completed")),
                types.toString());
        JsonObject done = events.get(events.size() - 1).getJsonObject("response");
        assertEquals(call.getString("arguments"), done.getJsonArray("output")
                .getJsonObject(done.getJsonArray("output").size() - 1).getString("arguments"));

        JsonObject answered = response(
                Map.of("model", smolLm2, "temperature", 0, "max_output_tokens", 24, "tools", List.of(tool), "input",
                        List.of(Map.of("role", "user", "content", "What is the weather in Paris?"),
                                Map.of("type", "function_call", "call_id", call.getString("call_id"), "name",
                                        "get_weather", "arguments", call.getString("arguments")),
                                Map.of("type", "function_call_output", "call_id", call.getString("call_id"), "output",
                                        "18 C and sunny"))));
        assertFalse(answered.getJsonArray("output").isEmpty(), answered.encode());
    }

    @Test
    @Order(100)
    void everyGapOfTheListIsMetByAnAnswer() {
        assertEquals(List.of(), document.unusedGaps(),
                "a gap of OpenAiDocument.GAPS that no answer of this test met: drop it, or send what meets it");
    }

    // sending and judging

    private JsonObject chat(Map<String, Object> body) {
        return answer("POST /chat/completions", "/v1/chat/completions", body);
    }

    private JsonObject completion(Map<String, Object> body) {
        return answer("POST /completions", "/v1/completions", body);
    }

    private JsonObject embedding(Map<String, Object> body) {
        return answer("POST /embeddings", "/v1/embeddings", body);
    }

    private JsonObject response(Map<String, Object> body) {
        return answer("POST /responses", "/v1/responses", body);
    }

    private static Map<String, Object> with(Map<String, Object> body, String field, Object value) {
        Map<String, Object> copy = new HashMap<>(body);
        copy.put(field, value);
        return copy;
    }

    /** A 200 answer, valid by the document's schema of its operation's answer. */
    private JsonObject answer(String operation, String path, Map<String, Object> body) {
        Response response = as(key).body(new JsonObject(body).encode()).post(path);
        String request = new JsonObject(body).encode();
        assertEquals(200, response.statusCode(), request + " -> " + response.asString());
        String media = media(response);
        assertEquals(List.of(), judge(operation, media, document.answerSchema(operation, media), response.asString()),
                request);
        return new JsonObject(response.asString());
    }

    /**
     * A streamed answer's events, each valid by the document: a chat chunk by the stream's schema, a completion chunk
     * by the completion's, a Responses event by the schema of its {@code type}; ends with {@code [DONE]} where OpenAI's
     * streams do.
     */
    private List<JsonObject> stream(String operation, String path, Map<String, Object> body) {
        Response response = as(key).body(new JsonObject(body).encode()).post(path);
        String request = new JsonObject(body).encode();
        assertEquals(200, response.statusCode(), request + " -> " + response.asString());
        String media = media(response);
        List<String> data = new ArrayList<>();
        for (String event : response.asString().split("\n\n")) {
            for (String line : event.split("\n")) {
                if (line.startsWith("data:")) {
                    data.add(line.substring(5).strip());
                }
            }
        }
        boolean responses = operation.equals("POST /responses");
        if (!responses) {
            assertEquals("[DONE]", data.remove(data.size() - 1), request);
        }
        Map<String, String> eventSchemas = responses ? document.responseEventSchemas() : Map.of();
        Schema<?> schema = document.answerSchema(operation, media);
        List<JsonObject> events = new ArrayList<>();
        for (String json : data) {
            JsonObject event = new JsonObject(json);
            Schema<?> judged = schema != null ? schema : document.answerSchema(operation, "application/json");
            if (responses) {
                String name = eventSchemas.get(event.getString("type"));
                assertTrue(name != null, "an event type OpenAI's document does not have: " + json);
                judged = document.component(name);
            }
            assertEquals(List.of(), judge(operation, media, judged, json), request + " -> " + json);
            events.add(event);
        }
        assertFalse(events.isEmpty(), request);
        return events;
    }

    private static List<String> judge(String operation, String media, Schema<?> schema, String json) {
        return document.violations(operation, media, schema, json);
    }

    private static String media(Response response) {
        return response.contentType().split(";")[0].strip();
    }
}

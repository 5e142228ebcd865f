package dev.fulcrum.inference.engine.builtin;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.chat;
import static dev.fulcrum.inference.Inference.events;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/** Chat completions by the built-in model, the default catalog of a fresh install. */
@QuarkusTest
class BuiltinCompletionsTest {

    private static final String MODEL = "fulcrum-tiny";

    @Inject
    Fixtures fixtures;

    @Inject
    BuiltinWeights weights;

    private static Map<String, Object> request(Object... fields) {
        Map<String, Object> body = new HashMap<>(chat(MODEL, "Say something about the sea."));
        for (int i = 0; i < fields.length; i += 2) {
            body.put((String) fields[i], fields[i + 1]);
        }
        return body;
    }

    @Test
    void plainCompletionWithUsage() {
        Account user = fixtures.user("tiny");
        as(user.key()).body(request("max_tokens", 8, "seed", 1)).post("/v1/chat/completions").then().statusCode(200)
                .body("object", equalTo("chat.completion")).body("model", equalTo(MODEL)).body("choices", hasSize(1))
                .body("choices[0].message.role", equalTo("assistant")).body("usage.prompt_tokens", greaterThan(0))
                .body("usage.completion_tokens", greaterThan(0));
        assertTrue(java.nio.file.Files.isRegularFile(weights.file()), "the weights are kept in the data directory");
    }

    @Test
    void seedMakesItDeterministicAndNGivesChoices() {
        Account user = fixtures.user("tiny");
        Map<String, Object> body = request("max_tokens", 12, "seed", 42, "temperature", 1.0, "n", 3);
        JsonPath first = as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200)
                .body("choices", hasSize(3)).body("choices.index", equalTo(List.of(0, 1, 2))).extract().jsonPath();
        JsonPath second = as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200).extract()
                .jsonPath();
        assertEquals(first.getList("choices.message.content"), second.getList("choices.message.content"));
        assertEquals(first.getInt("usage.completion_tokens"), second.getInt("usage.completion_tokens"));
    }

    @Test
    void maxTokensEndsWithLength() {
        Account user = fixtures.user("tiny");
        // a stop string that cannot occur in 2 tokens is irrelevant; greedy decoding may end early with stop
        JsonPath answer = as(user.key()).body(request("max_completion_tokens", 1, "temperature", 0))
                .post("/v1/chat/completions").then().statusCode(200).extract().jsonPath();
        int tokens = answer.getInt("usage.completion_tokens");
        assertEquals(1, tokens);
        String reason = answer.getString("choices[0].finish_reason");
        assertTrue(reason.equals("length") || answer.getString("choices[0].message.content").isEmpty(), reason);
        boolean sawLength = false;
        for (long seed = 0; seed < 5 && !sawLength; seed++) {
            sawLength = "length".equals(as(user.key()).body(request("max_tokens", 3, "seed", seed))
                    .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].finish_reason"));
        }
        assertTrue(sawLength, "max_tokens ends a completion with finish_reason length");
    }

    @Test
    void stopStringsAreNotInTheText() {
        Account user = fixtures.user("tiny");
        Map<String, Object> free = request("max_tokens", 24, "seed", 7);
        String text = as(user.key()).body(free).post("/v1/chat/completions").then().statusCode(200).extract()
                .path("choices[0].message.content");
        if (text.length() >= 3) {
            String stop = text.substring(2, 3);
            Map<String, Object> stopped = request("max_tokens", 24, "seed", 7, "stop", List.of(stop));
            as(user.key()).body(stopped).post("/v1/chat/completions").then().statusCode(200)
                    .body("choices[0].message.content", equalTo(text.substring(0, text.indexOf(stop))))
                    .body("choices[0].finish_reason", equalTo("stop"));
        }
    }

    @Test
    void streamsTokenByTokenWithUsage() {
        Account user = fixtures.user("tiny");
        Map<String, Object> body = request("max_tokens", 6, "seed", 3, "stream", true, "stream_options",
                Map.of("include_usage", true));
        List<String> events = events(
                as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200).extract().asString());
        assertEquals("[DONE]", events.get(events.size() - 1));
        JsonObject first = new JsonObject(events.get(0));
        assertEquals("assistant",
                first.getJsonArray("choices").getJsonObject(0).getJsonObject("delta").getString("role"));
        JsonObject last = new JsonObject(events.get(events.size() - 3));
        assertFalse(last.getJsonArray("choices").getJsonObject(0).getString("finish_reason").isEmpty());
        JsonObject usage = new JsonObject(events.get(events.size() - 2));
        assertTrue(usage.getJsonArray("choices").isEmpty());
        StringBuilder text = new StringBuilder();
        for (String event : events.subList(0, events.size() - 2)) {
            JsonObject chunk = new JsonObject(event);
            assertEquals(first.getString("id"), chunk.getString("id"));
            assertEquals(first.getLong("created"), chunk.getLong("created"));
            text.append(chunk.getJsonArray("choices").getJsonObject(0).getJsonObject("delta").getString("content", ""));
        }
        String plain = as(user.key()).body(request("max_tokens", 6, "seed", 3)).post("/v1/chat/completions").then()
                .statusCode(200).extract().path("choices[0].message.content");
        assertEquals(plain, text.toString(), "streamed pieces add up to the plain answer of the same seed");
        assertEquals(usage.getJsonObject("usage").getInteger("completion_tokens") > 0, true);
    }

    @Test
    void logprobsListEveryTokenWithItsMostLikelyAlternatives() {
        Account user = fixtures.user("tiny");
        Map<String, Object> body = request("max_tokens", 8, "temperature", 0, "logprobs", true, "top_logprobs", 3);
        JsonPath answer = as(user.key()).body(body).post("/v1/chat/completions").then().statusCode(200).extract()
                .jsonPath();
        List<Map<String, Object>> content = answer.getList("choices[0].logprobs.content");
        int tokens = answer.getInt("usage.completion_tokens");
        // every generated token is listed, but the end of the turn that may have ended the answer
        assertTrue(content.size() == tokens || content.size() == tokens - 1, content.size() + " of " + tokens);
        assertFalse(content.isEmpty());
        for (Map<String, Object> token : content) {
            double logprob = ((Number) token.get("logprob")).doubleValue();
            assertTrue(logprob <= 0, "a log-probability: " + logprob);
            List<Map<String, Object>> top = (List<Map<String, Object>>) token.get("top_logprobs");
            assertEquals(3, top.size());
            for (int i = 1; i < top.size(); i++) {
                assertTrue(((Number) top.get(i - 1).get("logprob"))
                        .doubleValue() >= ((Number) top.get(i).get("logprob")).doubleValue(), "most likely first");
            }
            // greedy decoding picks the most likely token
            assertEquals(top.get(0).get("bytes"), token.get("bytes"));
            assertEquals(((Number) top.get(0).get("logprob")).doubleValue(), logprob, 1e-9);
        }

        // streamed, the chunks' tokens add up to the same list
        Map<String, Object> streamed = new HashMap<>(body);
        streamed.put("stream", true);
        List<String> events = events(
                as(user.key()).body(streamed).post("/v1/chat/completions").then().statusCode(200).extract().asString());
        List<Object> fromChunks = new java.util.ArrayList<>();
        for (String event : events.subList(0, events.size() - 1)) {
            JsonObject choice = new JsonObject(event).getJsonArray("choices").getJsonObject(0);
            JsonObject logprobs = choice.getJsonObject("logprobs");
            if (logprobs != null) {
                fromChunks.addAll(logprobs.getJsonArray("content").getList());
            }
        }
        assertEquals(content.stream().map(t -> t.get("bytes")).toList(), fromChunks.stream()
                .map(t -> new JsonObject((Map<String, Object>) t).getJsonArray("bytes").getList()).toList());

        // without logprobs, no list; top_logprobs alone is refused by name
        as(user.key()).body(request("max_tokens", 2)).post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].logprobs", equalTo(null));
        as(user.key()).body(request("top_logprobs", 2)).post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("top_logprobs"));
    }

    @Test
    void whatTheModelCannotHonourIsRefusedByName() {
        Account user = fixtures.user("tiny");
        for (Object[] field : new Object[][] {
                { "tools", List.of(Map.of("type", "function", "function", Map.of("name", "f"))) },
                { "response_format", Map.of("type", "json_object") }, { "presence_penalty", 0.5 },
                { "tool_choice", "required" } }) {
            as(user.key()).body(request(field)).post("/v1/chat/completions").then().statusCode(400)
                    .body("error.param", equalTo(field[0])).body("error.code", equalTo("unsupported_parameter"));
        }
        as(user.key()).body(request("response_format", Map.of("type", "text"), "max_tokens", 2))
                .post("/v1/chat/completions").then().statusCode(200);
    }
}

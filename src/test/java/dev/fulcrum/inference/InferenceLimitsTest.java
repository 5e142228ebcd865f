package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.chat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.SmallLimits;

/** The per-project concurrency limit (429) and the monthly token quota (402), with tiny limits. */
@QuarkusTest
@TestProfile(SmallLimits.class)
class InferenceLimitsTest {

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

    @Test
    void concurrencyOverTheProjectLimitIs429WithRetryAfter() {
        Account user = fixtures.user("busy");
        String id = Fixtures.unique("held");
        Inference.upstreamModel(id, stub, "held", Map.of());
        int before = stub.held.get();
        List<CompletableFuture<Response>> running = List.of(
                CompletableFuture.supplyAsync(() -> as(user.key()).body(chat(id, "a")).post("/v1/chat/completions")),
                CompletableFuture.supplyAsync(() -> as(user.key()).body(chat(id, "b")).post("/v1/chat/completions")));
        await("two requests held upstream").atMost(Duration.ofSeconds(10)).until(() -> stub.held.get() == before + 2);
        as(user.key()).body(chat(id, "c")).post("/v1/chat/completions").then().statusCode(429)
                .header("Retry-After", notNullValue())
                .body("error.message", equalTo("Concurrency limit reached for requests"))
                .body("error.type", equalTo("rate_limit_error"));
        // another project of the same user is not limited by this one
        Account other = fixtures.user("calm");
        String echo = Fixtures.unique("echo");
        Inference.upstreamModel(echo, stub, "echo", Map.of());
        as(other.key()).body(chat(echo, "d")).post("/v1/chat/completions").then().statusCode(200);
        stub.release();
        running.forEach(response -> response.join().then().statusCode(200));
        as(user.key()).body(chat(echo, "e")).post("/v1/chat/completions").then().statusCode(200);
    }

    @Test
    void aModelsConnectionLimitIsExactWhenSmall() {
        String id = Fixtures.unique("one-slot");
        // one connection and no queue: a model server with a single slot gets one request at a time
        Inference.upstreamModel(id, stub, "held", Map.of("max_concurrency", 1, "max_queue", 0));
        Account first = fixtures.user("slot-first");
        Account second = fixtures.user("slot-second");
        int before = stub.held.get();
        CompletableFuture<Response> running = CompletableFuture
                .supplyAsync(() -> as(first.key()).body(chat(id, "a")).post("/v1/chat/completions"));
        await("one request held upstream").atMost(Duration.ofSeconds(10)).until(() -> stub.held.get() == before + 1);
        for (int i = 0; i < 4; i++) { // on whichever event loop each lands
            as(second.key()).body(chat(id, "b")).post("/v1/chat/completions").then().statusCode(429)
                    .body("error.code", equalTo("model_at_capacity")).header("Retry-After", notNullValue());
        }
        stub.release();
        running.join().then().statusCode(200);
        // the slot is free again
        CompletableFuture<Response> next = CompletableFuture
                .supplyAsync(() -> as(second.key()).body(chat(id, "c")).post("/v1/chat/completions"));
        await("two requests held upstream").atMost(Duration.ofSeconds(10)).until(() -> stub.held.get() == before + 2);
        stub.release();
        next.join().then().statusCode(200);
    }

    @Test
    void usedUpMonthlyQuotaIs402() {
        Account user = fixtures.user("spender");
        String id = Fixtures.unique("echo");
        Inference.upstreamModel(id, stub, "echo", Map.of());
        // 16 tokens a completion: 0, 16, 32 used before each of the three, then 48 >= 40
        for (int i = 0; i < 3; i++) {
            as(user.key()).body(chat(id, "x")).post("/v1/chat/completions").then().statusCode(200);
        }
        as(user.key()).body(chat(id, "x")).post("/v1/chat/completions").then().statusCode(402)
                .body("error.message",
                        equalTo("You exceeded your current quota, please check your plan and billing details"))
                .body("error.code", equalTo("insufficient_quota"));
    }

    @Test
    void textCompletionsEmbeddingsAndResponsesShareTheLimitAndTheQuota() {
        Account user = fixtures.user("surface");
        String held = Fixtures.unique("held");
        Inference.upstreamModel(held, stub, "held", Map.of());
        String echo = Fixtures.unique("echo");
        Inference.upstreamModel(echo, stub, "echo", Map.of());
        int before = stub.held.get();
        List<CompletableFuture<Response>> running = List.of(
                CompletableFuture.supplyAsync(() -> as(user.key()).body(chat(held, "a")).post("/v1/chat/completions")),
                // the stub has no Responses API for this model: bridged to its chat completions, and held there
                CompletableFuture.supplyAsync(
                        () -> as(user.key()).body(Map.of("model", held, "input", "b")).post("/v1/responses")));
        await("two requests held upstream").atMost(Duration.ofSeconds(10)).until(() -> stub.held.get() == before + 2);
        for (String path : List.of("/v1/completions", "/v1/embeddings", "/v1/responses")) {
            as(user.key()).body(Map.of("model", echo, "prompt", "x", "input", "x")).post(path).then().statusCode(429)
                    .body("error.message", equalTo("Concurrency limit reached for requests"));
        }
        stub.release();
        running.forEach(response -> response.join().then().statusCode(200));
        // the quota: 16 tokens each for the two held ones, then 7 inputs of 3 tokens (21): 53 >= 40
        as(user.key()).body(Map.of("model", echo, "input", java.util.Collections.nCopies(7, "x")))
                .post("/v1/embeddings").then().statusCode(200).body("usage.prompt_tokens", equalTo(21));
        for (String path : List.of("/v1/completions", "/v1/embeddings", "/v1/responses")) {
            as(user.key()).body(Map.of("model", echo, "prompt", "x", "input", "x")).post(path).then().statusCode(402)
                    .body("error.code", equalTo("insufficient_quota"));
        }
    }
}

package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.asAdmin;
import static dev.fulcrum.inference.Inference.chat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

import dev.fulcrum.inference.engine.builtin.BuiltinWorkers;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * One project cannot starve another on the built-in model: max_tokens and n * max_tokens are bounded (400, as OpenAI
 * refuses a max_tokens over a model's limit), each project waits in its own bounded queue (429 beyond it), and a free
 * thread serves the project with the fewest generations running.
 */
@QuarkusTest
class BuiltinFairnessTest {

    private static final String MODEL = "fulcrum-tiny";

    static OpenAiStub stub;

    @Inject
    Fixtures fixtures;

    @Inject
    BuiltinWorkers workers;

    @Inject
    InferenceConfig config;

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
    }

    private static Map<String, Object> request(Object... fields) {
        Map<String, Object> body = new HashMap<>(chat(MODEL, "Tell me a long story about the sea."));
        for (int i = 0; i < fields.length; i += 2) {
            body.put((String) fields[i], fields[i + 1]);
        }
        return body;
    }

    @Test
    void theFloodOfTheIssueIsRefusedNamingMaxTokens() {
        Account user = fixtures.user("flood");
        as(user.key()).body(request("n", 128, "max_tokens", Integer.MAX_VALUE)).post("/v1/chat/completions").then()
                .statusCode(400).body("error.type", equalTo("invalid_request_error"))
                .body("error.param", equalTo("max_tokens"))
                .body("error.message", equalTo("max_tokens is too large: 2147483647. The model 'fulcrum-tiny' "
                        + "supports at most 1024 completion tokens, whereas you provided 2147483647."));
        as(user.key()).body(request("max_completion_tokens", 1025)).post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("max_completion_tokens"));
        as(user.key()).body(request("max_tokens", 1024, "seed", 1)).post("/v1/chat/completions").then().statusCode(200);
    }

    @Test
    void manyChoicesAreBoundedInAllTogether() {
        Account user = fixtures.user("choices");
        as(user.key()).body(request("n", 5, "max_tokens", 1024)).post("/v1/chat/completions").then().statusCode(400)
                .body("error.type", equalTo("invalid_request_error")).body("error.param", equalTo("n"))
                .body("error.message", containsString("at most 4096 tokens per request"));
        as(user.key()).body(request("n", 4, "max_tokens", 1024, "seed", 2)).post("/v1/chat/completions").then()
                .statusCode(200).body("choices.size()", equalTo(4));
        // without max_tokens each of n choices gets the default, lowered to max-total-tokens / n
        Response many = as(user.key()).body(request("n", 128, "seed", 3, "temperature", 2)).post("/v1/chat/completions")
                .then().statusCode(200).extract().response();
        assertEquals(128, many.jsonPath().getList("choices").size());
        assertTrue(many.jsonPath().getInt("usage.completion_tokens") <= 4096, "at most max-total-tokens in all");
    }

    @Test
    void aCatalogModelHasItsOwnMaxTokens() {
        String id = Fixtures.unique("capped");
        Inference.upstreamModel(id, stub, "echo", Map.of("max_tokens", 100));
        asAdmin().get("/api/v1/admin/models/" + id).then().statusCode(200).body("max_tokens", equalTo(100));
        asAdmin().get("/api/v1/admin/models/" + MODEL).then().statusCode(200).body("max_tokens", equalTo(1024));
        Account user = fixtures.user("capped");
        Map<String, Object> over = new HashMap<>(chat(id, "hi"));
        over.put("max_tokens", 101);
        int before = stub.requests.size();
        as(user.key()).body(over).post("/v1/chat/completions").then().statusCode(400).body("error.param",
                equalTo("max_tokens"));
        assertEquals(before, stub.requests.size(), "refused before it went upstream");
        over.put("max_tokens", 100);
        as(user.key()).body(over).post("/v1/chat/completions").then().statusCode(200);

        String free = Fixtures.unique("free");
        Inference.upstreamModel(free, stub, "echo", Map.of());
        asAdmin().get("/api/v1/admin/models/" + free).then().statusCode(200).body("max_tokens", nullValue());
        asAdmin().body(Map.of("id", Fixtures.unique("bad"), "backend", "openai-compatible", "base_url", stub.baseUrl(),
                "max_tokens", 0)).post("/api/v1/admin/models").then().statusCode(422);
    }

    @Test
    void aSecondProjectIsServedWhileTheFirstFloodsTheModel() throws Exception {
        Account flooder = fixtures.user("flooder");
        Account other = fixtures.user("other");
        String flood = FairExecutor.projectKey(flooder.name(), "inference");
        FairExecutor executor = workers.executor();
        int threads = config.builtin().threads();
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch rest = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(threads);
        List<CompletableFuture<Response>> queuedRequests = new ArrayList<>();
        try {
            // the flooding project holds every thread of the model...
            executor.execute(flood, () -> block(started, first));
            for (int i = 1; i < threads; i++) {
                executor.execute(flood, () -> block(started, rest));
            }
            assertTrue(started.await(10, TimeUnit.SECONDS), "the flood holds the threads");
            // ... and fills its queue
            for (int i = 0; i < config.builtin().maxQueuedPerProject(); i++) {
                executor.execute(flood, () -> block(null, rest));
            }
            assertEquals(config.builtin().maxQueuedPerProject(), executor.waiting(flood));
            // one more request of the flooding project is answered 429 at once
            as(flooder.key()).body(request("max_tokens", 4)).post("/v1/chat/completions").then().statusCode(429)
                    .header("Retry-After", notNullValue()).body("error.code", equalTo("model_at_capacity"));
            // the other project's request waits behind the whole flood in arrival order, but is served next
            queuedRequests.add(CompletableFuture.supplyAsync(
                    () -> as(other.key()).body(request("max_tokens", 4, "seed", 4)).post("/v1/chat/completions")));
            String victim = FairExecutor.projectKey(other.name(), "inference");
            await("the victim's request waits").atMost(Duration.ofSeconds(10))
                    .until(() -> executor.waiting(victim) == 1);
            first.countDown(); // one thread becomes free: the other project has none running, the flood has
            Response served = queuedRequests.get(0).get(30, TimeUnit.SECONDS);
            served.then().statusCode(200).body("choices[0].message.role", equalTo("assistant"));
        } finally {
            first.countDown();
            rest.countDown();
        }
        await("the flood is drained").atMost(Duration.ofSeconds(10))
                .until(() -> executor.waiting(flood) == 0 && executor.running(flood) == 0);
    }

    private static void block(CountDownLatch started, CountDownLatch release) {
        if (started != null) {
            started.countDown();
        }
        try {
            release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aFullProjectQueueRefusesWithoutWaiting() {
        FairExecutor small = new FairExecutor("test", 1, 1, 10);
        CountDownLatch release = new CountDownLatch(1);
        try {
            small.execute("a", () -> block(null, release));
            await("a task of a runs").atMost(Duration.ofSeconds(5)).until(() -> small.running("a") == 1);
            small.execute("a", () -> block(null, release));
            assertThrows(RejectedExecutionException.class, () -> small.execute("a", () -> block(null, release)));
            small.execute("b", () -> block(null, release)); // another key has its own queue
            assertEquals(1, small.waiting("b"));
        } finally {
            release.countDown();
            small.shutdownNow();
        }
    }
}

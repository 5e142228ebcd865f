package dev.fulcrum.inference.engine.llama;

import static dev.fulcrum.inference.Inference.as;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.Inference;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.ModelCatalog;
import dev.fulcrum.inference.engine.builtin.BuiltinWorkers;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The local engines share their threads between projects one choice at a time: a request of many choices (chat's
 * {@code n}, text completions' prompts times {@code n}) goes back to its project's queue after each choice, so another
 * project's request waits for one choice of it, not for all. Deterministic: the engine's threads are held by tasks of
 * the test so that the flood, the victim and a blocker are queued in a known order; the victim must be answered while
 * the blocker holds the thread after the flood's first choice (before, it was answered after the flood's last), and the
 * flood's answer is then whole and in order.
 */
@QuarkusTest
class LocalFairnessTest {

    @Inject
    Fixtures fixtures;

    @Inject
    ModelCatalog catalog;

    @Inject
    BuiltinWorkers builtinWorkers;

    @Inject
    InferenceConfig config;

    @BeforeAll
    static void tinyGguf() throws Exception {
        if (!Files.exists(GgufCompletionsTest.TINY_GGUF.resolve("model.gguf"))) {
            GgufCompletionsTest.tinyGguf();
        }
    }

    private FairExecutor ggufWorkers(String model) throws Exception {
        ServedModel served = catalog.find(model).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
        return ((GgufBackend) served.backend()).workers();
    }

    private static Map<String, Object> body(String model, Object... fields) {
        Map<String, Object> body = new HashMap<>(Inference.chat(model, "Tell me a long story about the sea."));
        for (int i = 0; i < fields.length; i += 2) {
            body.put((String) fields[i], fields[i + 1]);
        }
        return body;
    }

    @Test
    void aGgufChatFloodOfEightChoicesLetsAnotherProjectInAfterOne() throws Exception {
        String model = GgufCompletionsTest.ggufModel(Fixtures.unique("tiny/fair"));
        Account flooder = fixtures.user("ggufflood");
        Account victim = fixtures.user("ggufvictim");
        as(victim.key()).body(body(model, "max_tokens", 2)).post("/v1/chat/completions").then().statusCode(200);
        Response flood = floodAndVictim(
                ggufWorkers(model), flooder, victim, "/v1/chat/completions", body(model, "n", 8, "max_tokens", 8,
                        "seed", 1, "stream", true, "stream_options", Map.of("include_usage", true)),
                body(model, "max_tokens", 4));
        List<JsonObject> chunks = chunks(flood);
        List<Integer> finished = new ArrayList<>();
        int completionTokens = 0;
        for (JsonObject chunk : chunks) {
            if (chunk.getJsonArray("choices").isEmpty()) {
                completionTokens = chunk.getJsonObject("usage").getInteger("completion_tokens");
                continue;
            }
            JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
            assertFalse(finished.contains(choice.getInteger("index")), "no chunk of a choice after its end");
            if (choice.getString("finish_reason") != null) {
                finished.add(choice.getInteger("index"));
            }
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), finished, "the choices one after the other, in order");
        assertTrue(completionTokens > 0 && completionTokens <= 64, "usage of all the choices: " + completionTokens);
    }

    @Test
    void aGgufTextCompletionOfManyPromptsLetsAnotherProjectInAfterOne() throws Exception {
        String model = GgufCompletionsTest.ggufModel(Fixtures.unique("tiny/fair"));
        Account flooder = fixtures.user("ggufflood");
        Account victim = fixtures.user("ggufvictim");
        Map<String, Object> flood = Map.of("model", model, "prompt", List.of("Once upon", "The sea"), "n", 4,
                "max_tokens", 6, "seed", 3);
        Map<String, Object> alone = as(victim.key()).body(flood).post("/v1/completions").then().statusCode(200)
                .extract().jsonPath().getMap("usage");
        Response answered = floodAndVictim(ggufWorkers(model), flooder, victim, "/v1/completions", flood,
                Map.of("model", model, "prompt", "Hi", "max_tokens", 2));
        answered.then().statusCode(200).body("choices.index", equalTo(List.of(0, 1, 2, 3, 4, 5, 6, 7))).body("usage",
                equalTo(alone));
    }

    @Test
    void aGgufEmbeddingOfManyInputsLetsAnotherProjectInAfterOne() throws Exception {
        String model = GgufCompletionsTest.ggufModel(Fixtures.unique("tiny/fair"));
        Account flooder = fixtures.user("ggufflood");
        Account victim = fixtures.user("ggufvictim");
        Map<String, Object> flood = Map.of("model", model, "input",
                List.of("one", "two two", "three three three", "four", "five", "six", "seven", "eight"));
        Map<String, Object> alone = as(victim.key()).body(flood).post("/v1/embeddings").then().statusCode(200).extract()
                .jsonPath().getMap("usage");
        Response answered = floodAndVictim(ggufWorkers(model), flooder, victim, "/v1/embeddings", flood,
                Map.of("model", model, "input", "Hi"));
        answered.then().statusCode(200).body("data.index", equalTo(List.of(0, 1, 2, 3, 4, 5, 6, 7))).body("usage",
                equalTo(alone));
    }

    @Test
    void aBuiltinFloodOfEightChoicesLetsAnotherProjectInAfterOne() throws Exception {
        Account flooder = fixtures.user("builtinflood");
        Account victim = fixtures.user("builtinvictim");
        Map<String, Object> flood = body("fulcrum-tiny", "n", 8, "max_tokens", 16, "seed", 5);
        Map<String, Object> alone = as(victim.key()).body(flood).post("/v1/chat/completions").then().statusCode(200)
                .extract().jsonPath().getMap("usage");
        FairExecutor executor = builtinWorkers.executor();
        // the test uses one of the model's threads: the others are held throughout
        CountDownLatch holdOthers = new CountDownLatch(1);
        try {
            for (int i = 1; i < config.builtin().threads(); i++) {
                CountDownLatch started = new CountDownLatch(1);
                executor.execute("test/hold", () -> block(started, holdOthers));
                assertTrue(started.await(10, TimeUnit.SECONDS));
            }
            Response answered = floodAndVictim(executor, flooder, victim, "/v1/chat/completions", flood,
                    body("fulcrum-tiny", "max_tokens", 4));
            answered.then().statusCode(200).body("choices.index", equalTo(List.of(0, 1, 2, 3, 4, 5, 6, 7)))
                    .body("usage", equalTo(alone));
        } finally {
            holdOthers.countDown();
        }
    }

    /**
     * With one free thread of {@code executor}: holds it with a task of the flooder's project, queues the flood's
     * request behind it, then the victim's request, then a blocker of a third key; releases the thread. The flood
     * (oldest) does its first choice and goes back to its queue, behind the victim and the blocker: the victim must be
     * answered while the blocker holds the thread. Returns the flood's answer once the blocker is released.
     */
    private Response floodAndVictim(FairExecutor executor, Account flooder, Account victim, String path,
            Map<String, Object> floodBody, Map<String, Object> victimBody) throws Exception {
        String floodKey = FairExecutor.projectKey(flooder.name(), "inference");
        String victimKey = FairExecutor.projectKey(victim.name(), "inference");
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        try {
            executor.execute(floodKey, () -> block(holding, release));
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the test holds the thread");
            CompletableFuture<Response> flood = CompletableFuture
                    .supplyAsync(() -> as(flooder.key()).body(floodBody).post(path));
            await("the flood waits").atMost(Duration.ofSeconds(10)).until(() -> executor.waiting(floodKey) == 1);
            CompletableFuture<Response> answered = CompletableFuture
                    .supplyAsync(() -> as(victim.key()).body(victimBody).post(path));
            await("the victim waits").atMost(Duration.ofSeconds(10)).until(() -> executor.waiting(victimKey) == 1);
            executor.execute("test/blocker", () -> block(blocking, unblock));
            release.countDown();
            assertTrue(blocking.await(30, TimeUnit.SECONDS), "the blocker's turn comes");
            // the thread is the blocker's now: the victim was served before it, the flood is between two choices
            answered.get(30, TimeUnit.SECONDS).then().statusCode(200);
            assertEquals(1, executor.running(floodKey), "the flood is under way");
            assertEquals(0, executor.waiting(floodKey));
            assertFalse(flood.isDone(), "the flood has choices to go");
            unblock.countDown();
            return flood.get(60, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            unblock.countDown();
        }
    }

    private static List<JsonObject> chunks(Response stream) {
        stream.then().statusCode(200);
        List<JsonObject> chunks = new ArrayList<>();
        for (String event : Inference.events(stream.asString())) {
            if (!event.equals("[DONE]")) {
                chunks.add(new JsonObject(event));
            }
        }
        return chunks;
    }

    private static void block(CountDownLatch started, CountDownLatch release) {
        started.countDown();
        try {
            release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static dev.fulcrum.training.TrainingClient.trajectory;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ReplicaStub;
import dev.fulcrum.platform.SmallDisks;
import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Checkpoints of an openai-compatible base model served as LoRA adapters: a real HTTP model server speaking vLLM's
 * {@code /v1/load_lora_adapter} and {@code /v1/chat/completions}, checkpoints made through the worker protocol.
 */
@QuarkusTest
@TestProfile(ExternalWorkers.class)
class LoraServingTest {

    static final Path EXPORT;
    static final String SERVER_DIR = "/models/lora";
    /** The base model vLLM serves, and one whose server is down. */
    static final String BASE_MODEL = "example/lora-base";
    static final String DOWN_MODEL = "example/lora-down";
    /** A base model served by two replicas of its server. */
    static final String REPLICATED_MODEL = "example/lora-replicated";

    static {
        try {
            EXPORT = Files.createTempDirectory("fulcrum-lora-test");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** vLLM as far as LoRA serving goes: loads adapters by name (refuses names with "refused"), answers chats. */
    static final class VllmStub {
        final Vertx vertx = Vertx.vertx();
        final HttpServer server;
        final List<JsonObject> loads = new CopyOnWriteArrayList<>();
        final List<JsonObject> chats = new CopyOnWriteArrayList<>();
        final List<String> authorizations = new CopyOnWriteArrayList<>();
        /** Adapters this server holds; a restart empties it, as vLLM forgets runtime-loaded adapters. */
        final java.util.Set<String> holding = java.util.concurrent.ConcurrentHashMap.newKeySet();

        VllmStub() throws Exception {
            server = vertx.createHttpServer().requestHandler(this::handle).listen(0, "127.0.0.1").toCompletionStage()
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
        }

        String baseUrl() {
            return "http://127.0.0.1:" + server.actualPort() + "/v1";
        }

        private void handle(HttpServerRequest request) {
            request.body().onSuccess(buffer -> {
                JsonObject body = buffer.toJsonObject();
                authorizations.add(String.valueOf(request.getHeader("Authorization")));
                if (request.path().equals("/v1/load_lora_adapter")) {
                    loads.add(body);
                    String name = body.getString("lora_name");
                    if (name.contains("refused")) {
                        request.response().setStatusCode(400).putHeader("Content-Type", "application/json")
                                .end(new JsonObject().put("object", "error")
                                        .put("message", "Invalid LoRA adapter: no adapter_config.json")
                                        .put("type", "BadRequestError").put("code", 400).encode());
                    } else {
                        holding.add(name);
                        request.response().end("Success: LoRA adapter '" + name + "' added successfully.");
                    }
                } else if (request.path().equals("/v1/chat/completions")) {
                    chats.add(body);
                    String model = body.getString("model");
                    if (!"base-model".equals(model) && !holding.contains(model)) {
                        request.response().setStatusCode(404).putHeader("Content-Type", "application/json")
                                .end(new JsonObject().put("object", "error")
                                        .put("message", "The model `" + model + "` does not exist.")
                                        .put("type", "NotFoundError").put("code", 404).encode());
                        return;
                    }
                    request.response().putHeader("Content-Type", "application/json")
                            .end(new JsonObject().put("id", "chatcmpl-lora").put("object", "chat.completion")
                                    .put("created", 1_700_000_000L).put("model", body.getString("model"))
                                    .put("choices",
                                            new JsonArray().add(new JsonObject().put("index", 0)
                                                    .put("message",
                                                            new JsonObject().put("role", "assistant").put("content",
                                                                    "Hello from LoRA"))
                                                    .put("finish_reason", "stop")))
                                    .put("usage", new JsonObject().put("prompt_tokens", 7).put("completion_tokens", 3)
                                            .put("total_tokens", 10))
                                    .encode());
                } else {
                    request.response().setStatusCode(404).end();
                }
            });
        }

        void close() throws Exception {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    static VllmStub vllm;
    static String workerId;

    static final byte[] CONFIG_1 = "{\"r\": 8, \"lora_alpha\": 16, \"base_model_name_or_path\": \"example/lora-base\"}"
            .getBytes(StandardCharsets.UTF_8);
    static final byte[] WEIGHTS_1 = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 };
    static final byte[] WEIGHTS_2 = new byte[] { 8, 7, 6, 5, 4, 3, 2, 1, 0 };

    @Inject
    Fixtures fixtures;

    private Account user;

    @BeforeAll
    static void upstream() throws Exception {
        vllm = new VllmStub();
    }

    @AfterAll
    static void stop() throws Exception {
        vllm.close();
    }

    @BeforeEach
    void setUp() {
        user = fixtures.user("lora");
        if (workerId == null) {
            Catalog.openAiCompatible(BASE_MODEL, vllm.baseUrl());
            Catalog.openAiCompatible(DOWN_MODEL, "http://127.0.0.1:9/v1");
            workerId = TrainingClient.worker(EmbeddedPostgresResource.ADMIN_KEY)
                    .body(Map.of("name", Fixtures.unique("gpu"), "base_models",
                            List.of(BASE_MODEL, DOWN_MODEL, REPLICATED_MODEL)))
                    .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        }
    }

    /** Trains one step through the worker protocol: the worker uploads the adapter files and finishes. */
    void checkpoint(String model, String baseModel, Map<String, byte[]> files) {
        String modelId = TrainingClient.register(user, user.name(), "lora", model, baseModel);
        String job = as(user)
                .body(Map.of("model_id", modelId, "trajectory_groups",
                        List.of(Map.of("trajectories",
                                List.of(trajectory("say z", "z", 1), trajectory("say z", "a", 0))))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        String token = TrainingClient.worker(EmbeddedPostgresResource.ADMIN_KEY)
                .post("/api/v1/workers/" + workerId + "/claim?wait=5").then().statusCode(200)
                .body("job_id", equalTo(job)).extract().path("token");
        files.forEach((path, content) -> given().filter(Contract.TRAINING).auth().oauth2(token)
                .contentType("application/octet-stream").queryParam("path", path).body(content)
                .put("/api/v1/workers/jobs/" + job + "/checkpoint").then().statusCode(200));
        TrainingClient.worker(token).body(Map.of("metrics", Map.of("loss", 0.5)))
                .post("/api/v1/workers/jobs/" + job + "/finish").then().statusCode(200);
    }

    static Map<String, Object> chat(String model) {
        return Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "hello")));
    }

    RequestSpecification inference(Account account) {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(account.key());
    }

    private String id(String model) {
        return "wandb-artifact:///" + user.name() + "/lora/" + model;
    }

    private String prefix(String model) {
        return (user.name() + "--lora--" + model).replaceAll("[^A-Za-z0-9._-]", "_");
    }

    /** The files of the directory the model server was told to load, read where Fulcrum wrote it. */
    static Map<String, byte[]> exported(String serverPath) throws IOException {
        assertTrue(serverPath.startsWith(SERVER_DIR + "/"), serverPath);
        Path dir = EXPORT.resolve(serverPath.substring(SERVER_DIR.length() + 1));
        Map<String, byte[]> files = new java.util.TreeMap<>();
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.filter(Files::isRegularFile).toList()) {
                files.put(dir.relativize(path).toString(), Files.readAllBytes(path));
            }
        }
        return files;
    }

    @Test
    void anAdapterIsLoadedAgainAfterTheModelServerForgotIt() throws Exception {
        checkpoint("restarted", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        int loadsBefore = vllm.loads.size();
        inference(user).body(chat(id("restarted"))).post("/v1/chat/completions").then().statusCode(200);
        assertEquals(loadsBefore + 1, vllm.loads.size());
        vllm.holding.clear(); // the model server restarted: its 404 makes Fulcrum load the adapter again and resend
        inference(user).body(chat(id("restarted"))).post("/v1/chat/completions").then().statusCode(200).body("model",
                equalTo(id("restarted")));
        assertEquals(loadsBefore + 2, vllm.loads.size());
    }

    /**
     * A base model of two replicas: a checkpoint's adapter is loaded on the replica a request goes to, later requests
     * go where it is loaded, a replica that restarted gets it again without the client seeing its 404, and when that
     * replica dies the other one loads it on demand.
     */
    @Test
    void anAdapterIsLoadedPerReplicaOnDemand() throws Exception {
        ReplicaStub first = new ReplicaStub("127.0.1.1", 0); // restarted: not at 127.0.0.1 (see ReplicaStub.start)
        ReplicaStub second = new ReplicaStub("127.0.1.2", 0);
        try {
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .body(Map.of("id", REPLICATED_MODEL, "backend", "openai-compatible", "base_urls",
                            List.of(first.baseUrl(), second.baseUrl()), "upstream_model", ReplicaStub.BASE))
                    .post("/api/v1/admin/models").then().statusCode(201);
            checkpoint("replicated", REPLICATED_MODEL,
                    Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
            for (int i = 0; i < 6; i++) {
                inference(user).body(chat(id("replicated"))).post("/v1/chat/completions").then().statusCode(200)
                        .body("model", equalTo(id("replicated")));
            }
            ReplicaStub holder = first.loads.isEmpty() ? second : first;
            ReplicaStub other = holder == first ? second : first;
            assertEquals(1, holder.loads.size(), "loaded once, where the first request went");
            assertEquals(List.of(), other.loads, "the other replica was not asked");
            assertEquals(6, holder.chats.get(), "requests go where the adapter is loaded");
            String adapter = holder.loads.get(0);
            given().filter(Contract.INFERENCE).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                    .get("/api/v1/admin/models/{id}", REPLICATED_MODEL).then().statusCode(200)
                    .body("replicas.find { it.name == '" + holder.name() + "' }.adapters", equalTo(List.of(adapter)));

            holder.stop(); // the replica restarts and forgets its adapters
            holder.start();
            inference(user).body(chat(id("replicated"))).post("/v1/chat/completions").then().statusCode(200);
            assertEquals(2, holder.loads.size(), "loaded again after its 404");
            assertEquals(List.of(), other.loads);

            holder.stop(); // the replica dies: the other one loads the adapter when a request comes to it
            for (int i = 0; i < 3; i++) {
                inference(user).body(chat(id("replicated"))).post("/v1/chat/completions").then().statusCode(200);
            }
            assertEquals(List.of(adapter), other.loads);
            assertEquals(3, other.chats.get());
        } finally {
            first.close();
            second.close();
        }
    }

    @Test
    void aCheckpointIsLoadedOnceAsAnAdapterAndAnsweredUnderItsArtifactId() throws Exception {
        checkpoint("agent", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        int loadsBefore = vllm.loads.size();
        inference(user).body(chat(id("agent") + ":step1")).post("/v1/chat/completions").then().statusCode(200)
                .body("model", equalTo(id("agent") + ":step1"))
                .body("choices[0].message.content", equalTo("Hello from LoRA"));
        assertEquals(loadsBefore + 1, vllm.loads.size());
        JsonObject load = vllm.loads.get(vllm.loads.size() - 1);
        String adapter = load.getString("lora_name");
        assertTrue(adapter.matches(java.util.regex.Pattern.quote(prefix("agent")) + "--step1-a\\d+"), adapter);
        Map<String, byte[]> files = exported(load.getString("lora_path"));
        assertEquals(List.of("adapter_config.json", "adapter_model.safetensors"), List.copyOf(files.keySet()));
        assertArrayEquals(CONFIG_1, files.get("adapter_config.json"));
        assertArrayEquals(WEIGHTS_1, files.get("adapter_model.safetensors"));
        assertEquals(adapter, vllm.chats.get(vllm.chats.size() - 1).getString("model"));
        assertEquals("Bearer vllm-secret", vllm.authorizations.get(vllm.authorizations.size() - 1));

        // a second completion does not load again
        inference(user).body(chat(id("agent") + ":step1")).post("/v1/chat/completions").then().statusCode(200)
                .body("model", equalTo(id("agent") + ":step1"));
        assertEquals(loadsBefore + 1, vllm.loads.size());
        assertEquals(adapter, vllm.chats.get(vllm.chats.size() - 1).getString("model"));

        // no suffix and :latest are the latest step
        inference(user).body(chat(id("agent"))).post("/v1/chat/completions").then().statusCode(200).body("model",
                equalTo(id("agent")));
        assertEquals(loadsBefore + 1, vllm.loads.size());
        assertEquals(adapter, vllm.chats.get(vllm.chats.size() - 1).getString("model"));
        checkpoint("agent", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_2));
        inference(user).body(chat(id("agent") + ":latest")).post("/v1/chat/completions").then().statusCode(200)
                .body("model", equalTo(id("agent") + ":latest"));
        assertEquals(loadsBefore + 2, vllm.loads.size());
        JsonObject second = vllm.loads.get(vllm.loads.size() - 1);
        assertTrue(
                second.getString("lora_name").matches(java.util.regex.Pattern.quote(prefix("agent")) + "--step2-a\\d+"),
                second.encode());
        assertArrayEquals(WEIGHTS_2, exported(second.getString("lora_path")).get("adapter_model.safetensors"));
        inference(user).body(chat(id("agent"))).post("/v1/chat/completions").then().statusCode(200);
        assertEquals(loadsBefore + 2, vllm.loads.size());
        assertEquals(second.getString("lora_name"), vllm.chats.get(vllm.chats.size() - 1).getString("model"));

        // step 0 is the base model itself
        inference(user).body(chat(id("agent") + ":step0")).post("/v1/chat/completions").then().statusCode(200)
                .body("model", equalTo(id("agent") + ":step0"));
        assertEquals("base-model", vllm.chats.get(vllm.chats.size() - 1).getString("model"));
        assertEquals(loadsBefore + 2, vllm.loads.size());
    }

    @Test
    void onlyMembersOfTheEntityAreServed() {
        checkpoint("private-agent", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        int loadsBefore = vllm.loads.size();
        Account stranger = fixtures.user("stranger");
        inference(stranger).body(chat(id("private-agent") + ":step1")).post("/v1/chat/completions").then()
                .statusCode(403).body("error.type", equalTo("permission_error"));
        assertEquals(loadsBefore, vllm.loads.size());
        inference(user).body(chat(id("private-agent") + ":step9")).post("/v1/chat/completions").then().statusCode(404)
                .body("error.code", equalTo("model_not_found"));
    }

    @Test
    void aRefusedLoadIsA502AndAnUnreachableServerA503() {
        checkpoint("refused-agent", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        int chatsBefore = vllm.chats.size();
        inference(user).body(chat(id("refused-agent") + ":step1")).post("/v1/chat/completions").then().statusCode(502)
                .body("error.type", equalTo("server_error")).body("error.code", equalTo("upstream_error"))
                .body("error.message", containsString("Invalid LoRA adapter: no adapter_config.json"));
        assertEquals(chatsBefore, vllm.chats.size());
        // a failed load is not remembered: the next request tries again
        int loads = vllm.loads.size();
        inference(user).body(chat(id("refused-agent") + ":step1")).post("/v1/chat/completions").then().statusCode(502);
        assertEquals(loads + 1, vllm.loads.size());

        checkpoint("far-agent", DOWN_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        inference(user).body(chat(id("far-agent") + ":step1")).post("/v1/chat/completions").then().statusCode(503)
                .body("error.code", equalTo("upstream_unavailable"));
    }

    /**
     * The checkpoint is written into the export directory before the model server is asked to load it: a full disk
     * there (a small tmpfs over the export directory, filled to the last byte) is OpenAI's error with a 507
     * ({@code insufficient_storage}), nothing half written stays for the model server to load and it is not asked to;
     * once space is free the same request is answered.
     */
    @Test
    void aFullExportDiskIsA507AndTheAdapterIsWrittenOnceSpaceIsFree() throws Exception {
        checkpoint("disk-agent", BASE_MODEL,
                Map.of("adapter_config.json", CONFIG_1, "adapter_model.safetensors", WEIGHTS_1));
        SmallDisks.mountTmpfs(EXPORT, "1m");
        try {
            Path ballast = SmallDisks.fill(EXPORT);
            int loadsBefore = vllm.loads.size();
            inference(user).body(chat(id("disk-agent") + ":step1")).post("/v1/chat/completions").then().statusCode(507)
                    .body("error.type", equalTo("server_error")).body("error.code", equalTo("insufficient_storage"))
                    .body("error.message", containsString("storage is full"));
            assertEquals(loadsBefore, vllm.loads.size(), "the model server was not asked to load anything");
            try (Stream<Path> files = Files.walk(EXPORT)) {
                assertEquals(List.of(ballast), files.filter(Files::isRegularFile).toList(), "nothing half written");
            }

            Files.delete(ballast);
            inference(user).body(chat(id("disk-agent") + ":step1")).post("/v1/chat/completions").then().statusCode(200)
                    .body("choices[0].message.content", equalTo("Hello from LoRA"));
            JsonObject load = vllm.loads.get(vllm.loads.size() - 1);
            assertArrayEquals(WEIGHTS_1, exported(load.getString("lora_path")).get("adapter_model.safetensors"));
        } finally {
            SmallDisks.unmount(EXPORT);
        }
    }
}

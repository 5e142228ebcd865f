package dev.fulcrum.tinker;

import static dev.fulcrum.support.TinkerCalls.as;
import static dev.fulcrum.support.TinkerCalls.future;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.StoredBlobs;
import dev.fulcrum.inference.ReplicaStub;
import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.TinkerCalls;

/**
 * {@code copy_weights}: saved weights copied into a project as a training run nothing trains, whose checkpoint lists
 * the source's stored files. The test plays the worker that saves the source's weights (on a vLLM base of its own, as
 * in {@link TinkerVllmTest}: a {@link ReplicaStub} samples the copy's adapter and answers its chats); the blob
 * collector is run to show that each checkpoint keeps the shared files alive on its own.
 */
@QuarkusTest
class TinkerCopyTest {

    static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;
    static final String BASE = "example/tinker-copy-vllm";

    static ReplicaStub vllm;

    @Inject
    Fixtures fixtures;

    @Inject
    StoredBlobs blobs;

    @Inject
    TinkerExpiry expiry;

    @BeforeAll
    static void upstream() throws Exception {
        vllm = new ReplicaStub("127.0.0.1", 0);
    }

    @AfterAll
    static void stop() throws Exception {
        vllm.close();
    }

    private static Response copy(Account user, Map<String, Object> body, String key) {
        RequestSpecification request = as(user).body(body);
        if (key != null) {
            request = request.header("X-Idempotency-Key", key);
        }
        return request.post("/tinker/api/v1/copy_weights");
    }

    private static String copied(Account user, Map<String, Object> body, String key) {
        return copy(user, body, key).then().statusCode(200).extract().path("tinker_path");
    }

    /** The worker answers the model's next operation, a save, with the adapter's files; the saved path. */
    private static String save(Account user, String token, String model, String kind, int seq, String name,
            byte[] weights) {
        return TinkerCalls.save(user, token, model, kind, Map.of("seq_id", seq, "path", name), weights);
    }

    private static String sampler(Account user, String session, int seq, String path) {
        return as(user).body(Map.of("session_id", session, "sampling_session_seq_id", seq, "model_path", path))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(200).extract()
                .path("sampling_session_id");
    }

    /** A sample of the sampling client: its tokens (vLLM's stub answers 300, 301 to a prompt of two tokens). */
    private static List<Integer> sample(Account user, String sampler) {
        String id = as(user)
                .body(Map.of("sampling_session_id", sampler, "seq_id", 1, "prompt",
                        Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(4, 2)))),
                        "sampling_params", Map.of("max_tokens", 2)))
                .post("/tinker/api/v1/asample").then().statusCode(200).extract().path("request_id");
        return future(user, id).then().statusCode(200).extract().jsonPath().getList("sequences[0].tokens");
    }

    private static JsonPath run(Account user, String model) {
        return as(user).get("/tinker/api/v1/training_runs/" + model).then().statusCode(200).extract().jsonPath();
    }

    private static String model(String path) {
        return path.substring("tinker://".length(), path.indexOf('/', "tinker://".length()));
    }

    /** A training client's model held by a worker of this class's base: its session, id and the worker's token. */
    private record Held(String session, String model, String token) {
    }

    /** A session of the user's in {@code project}, its model 0 created and held by a new worker. */
    private static Held held(Account user, String project) {
        String session = as(user).body(Map.of("project_id", project, "tags", List.of()))
                .post("/tinker/api/v1/create_session").then().statusCode(200).extract().path("session_id");
        String workerId = TinkerCalls.worker(ADMIN)
                .body(Map.of("name", Fixtures.unique("tinker-copy"), "base_models", List.of(BASE)))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        String created = as(user)
                .body(Map.of("session_id", session, "model_seq_id", 0, "base_model", BASE, "lora_config",
                        Map.of("rank", 4)))
                .post("/tinker/api/v1/create_model").then().statusCode(200).extract().path("request_id");
        String model = session + ":train:0";
        String token = TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?wait=10").then()
                .statusCode(200).body("model_id", equalTo(model)).extract().path("token");
        TinkerCalls.worker(token).body(Map.of("result", Map.of("model_id", model, "type", "create_model")))
                .post(TinkerCalls.next(token, model, "create_model")).then().statusCode(200);
        future(user, created).then().statusCode(200);
        return new Held(session, model, token);
    }

    @Test
    void copiesShareTheFilesAreSampledAndLoadedAndNeverTrained() throws Exception {
        Catalog.openAiCompatible(BASE, vllm.baseUrl());
        Account user = fixtures.user("tinkercopy");
        Account other = fixtures.user("tinkercopyother");
        Account lead = fixtures.user("tinkercopylead");
        PlatformEntity team = fixtures.team("tinkercopy", lead);
        fixtures.member(team, user, Role.MEMBER);
        PlatformEntity watched = fixtures.team("tinkercopyview", lead);
        fixtures.member(watched, user, Role.VIEWER);
        Held held = held(user, "train");
        String session = held.session();
        String model = held.model();
        String token = held.token();
        byte[] samplerBytes = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
        byte[] stateBytes = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
        String weights = save(user, token, model, "save_weights_for_sampler", 1, "s1", samplerBytes);
        String state = save(user, token, model, "save_weights", 2, "state", stateBytes);

        // refused before anything is made: a TTL under an hour, the SDK's access token, no destination, both, another
        // form of path
        Map<String, Object> toTeam = Map.of("source_path", weights, "destination_project_id", team.name + "/archive");
        copy(user, Map.of("source_path", weights, "destination_project_id", "archive", "ttl_seconds", 3599), null)
                .then().statusCode(422).body("detail[0].loc", equalTo(List.of("body", "ttl_seconds")))
                .body("detail[0].msg", containsString("3600 (an hour)"));
        as(user).header("X-Tinker-Weights-Access-Token", "secret").body(toTeam).post("/tinker/api/v1/copy_weights")
                .then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("header", "X-Tinker-Weights-Access-Token")));
        copy(user, Map.of("source_path", weights, "destination_project_id", "archive", "weights_access_token", "t"),
                null).then().statusCode(422).body("detail[0].loc", equalTo(List.of("body", "weights_access_token")));
        copy(user, Map.of("source_path", weights), null).then().statusCode(422).body("detail[0].loc",
                equalTo(List.of("body", "destination_project_id")));
        copy(user, Map.of("source_path", weights, "destination_project_id", "archive", "session_id", session,
                "model_seq_id", 3), null).then().statusCode(422);
        copy(user, Map.of("source_path", "tinker://x/other/s1", "destination_project_id", "archive"), null).then()
                .statusCode(422).body("detail[0].loc", equalTo(List.of("body", "source_path")));
        // the source as a sampling client reads it: another user's weights, or unknown ones, are a 404; the member
        // role is needed on the destination
        copy(other, Map.of("source_path", weights, "destination_project_id", "mine"), null).then().statusCode(404);
        copy(user, Map.of("source_path", model + "x", "destination_project_id", "archive"), null).then()
                .statusCode(422);
        copy(user, Map.of("source_path", "tinker://" + model + "/sampler_weights/nope", "destination_project_id",
                "archive"), null).then().statusCode(404);
        copy(user, Map.of("source_path", weights, "destination_project_id", watched.name + "/archive"), null).then()
                .statusCode(403);
        assertEquals(1, as(user).get("/tinker/api/v1/training_runs").then().statusCode(200).extract().jsonPath()
                .getInt("cursor.total_count"), "nothing was made");

        // a copy into a team's project (created when missing): a new run in a session of its own, ended already; the
        // same idempotency key answers it again, a copy without one is another copy
        String key = UUID.randomUUID().toString();
        String first = copied(user, toTeam, key);
        assertTrue(first.matches("tinker://s[a-z0-9]+:train:0/sampler_weights/s1"), first);
        String copyRun = model(first);
        assertFalse(copyRun.startsWith(session), first);
        assertEquals(first, copied(user, toTeam, key));
        String second = copied(user, toTeam, null);
        assertNotEquals(first, second);
        JsonPath listed = run(user, copyRun);
        assertEquals(List.of("copy", team.name + "/archive", BASE, 4, first),
                List.of(listed.getString("state"), listed.getString("project"), listed.getString("base_model"),
                        listed.getInt("lora_rank"), listed.getString("last_sampler_checkpoint.tinker_path")),
                listed.prettify());
        as(user).get("/tinker/api/v1/training_runs/" + copyRun + "/checkpoints").then().statusCode(200)
                .body("checkpoints.tinker_path", equalTo(List.of(first)))
                .body("checkpoints.checkpoint_type", equalTo(List.of("sampler")))
                // the bytes of its files, the source's: the config and the weights
                .body("checkpoints.size_bytes",
                        equalTo(List.of(TinkerCalls.ADAPTER_CONFIG.length + samplerBytes.length)));
        as(user).get("/tinker/api/v1/training_runs?limit=10").then().statusCode(200)
                .body("cursor.total_count", equalTo(3))
                .body("training_runs[0].training_run_id", equalTo(model(second)));
        String copySession = copyRun.substring(0, copyRun.indexOf(':'));
        as(user).get("/tinker/api/v1/sessions/" + copySession).then().statusCode(200)
                .body("project", equalTo(team.name + "/archive")).body("training_run_ids", equalTo(List.of(copyRun)))
                .body("ended_at", org.hamcrest.Matchers.notNullValue());
        as(other).get("/tinker/api/v1/training_runs/" + copyRun).then().statusCode(404);
        // its Fulcrum checkpoint lists the source's stored files: nothing was copied
        String sourceModel = run(user, model).getString("fulcrum_model_id");
        String copyModel = listed.getString("fulcrum_model_id");
        List<String> shared = blobs.checkpointDigests(sourceModel, 1);
        assertEquals(2, shared.size());
        assertEquals(shared, blobs.checkpointDigests(copyModel, 1));
        given().filter(Contract.of("training")).auth().oauth2(lead.key())
                .get("/v1/preview/models/" + copyModel + "/checkpoints").then().statusCode(200)
                .body("data.artifact", org.hamcrest.Matchers.hasItem("wandb-artifact:///" + team.name + "/archive/"
                        + TinkerIds.trainingModelName(copyRun) + ":step1"));

        // nothing trains a copy: its operations fail as the caller's, saying why
        for (String kind : List.of("optim_step", "forward_backward")) {
            Map<String, Object> body = kind.equals("optim_step")
                    ? Map.of("model_id", copyRun, "seq_id", 1, "adam_params", Map.of("learning_rate", 1e-3))
                    : Map.of("model_id", copyRun, "seq_id", 2, "forward_backward_input",
                            Map.of("loss_fn", "cross_entropy", "data", List.of(Map.of("model_input",
                                    Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 2)))),
                                    "loss_fn_inputs", Map.of("target_tokens",
                                            Map.of("data", List.of(2, 3), "dtype", "int64", "shape", List.of(2)))))));
            String op = as(user).body(body).post("/tinker/api/v1/" + kind).then().statusCode(200).extract()
                    .path("request_id");
            future(user, op).then().statusCode(200).body("category", equalTo("user"))
                    .body("error", containsString("is a copy of " + weights))
                    .body("error", containsString("cannot be trained on"));
        }

        // sampled as the source is: vLLM loads the copy's adapter from the copy's project; served by the chat API
        assertEquals(List.of(300, 301), sample(user, sampler(user, session, 0, first)));
        String adapter = vllm.loads.get(vllm.loads.size() - 1);
        assertTrue(vllm.loadedFrom.get(adapter).contains("/" + team.name + "/archive/"), vllm.loadedFrom.toString());
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(lead.key())
                .body(Map.of("model",
                        "wandb-artifact:///" + team.name + "/archive/" + TinkerIds.trainingModelName(copyRun)
                                + ":step1",
                        "messages", List.of(Map.of("role", "user", "content", "hello"))))
                .post("/v1/chat/completions").then().statusCode(200);

        // a training state copied into a slot of the caller's live session (its project); the same slot and source
        // again: the same copy; a slot taken by a training client: 409; another user's session: 404
        Map<String, Object> toSlot = Map.of("source_path", state, "session_id", session, "model_seq_id", 5);
        String stateCopy = copied(user, toSlot, null);
        assertEquals("tinker://" + session + ":train:5/weights/state", stateCopy);
        assertEquals(stateCopy, copied(user, toSlot, null));
        copy(user, Map.of("source_path", state, "session_id", session, "model_seq_id", 0), null).then().statusCode(409);
        copy(other, Map.of("source_path", state, "session_id", session, "model_seq_id", 6), null).then()
                .statusCode(404);
        assertEquals(List.of("copy", user.name() + "/train"), List.of(run(user, model(stateCopy)).getString("state"),
                run(user, model(stateCopy)).getString("project")));
        // it loads into a training client (create_training_client_from_state): the worker reads the source's bytes
        as(user).body(Map.of("tinker_path", stateCopy)).post("/tinker/api/v1/weights_info").then().statusCode(200)
                .body("base_model", equalTo(BASE)).body("lora_rank", equalTo(4));
        as(user).body(Map.of("model_id", model, "seq_id", 3, "path", stateCopy, "optimizer", false))
                .post("/tinker/api/v1/load_weights").then().statusCode(200);
        String load = TinkerCalls.next(token, model, "load_weights");
        byte[] loaded = TinkerCalls.worker(token).queryParam("path", "adapter_model.safetensors").get(load + "/files")
                .then().statusCode(200).extract().asByteArray();
        assertEquals(new String(stateBytes, StandardCharsets.UTF_8), new String(loaded, StandardCharsets.UTF_8));

        // each checkpoint keeps the shared files on its own: deleting the first copy's, then the source's, leaves
        // them to the second copy, still sampled; deleting that one too lets the collector remove the weights
        as(user).delete("/tinker/api/v1/training_runs/" + copyRun + "/checkpoints/sampler_weights/s1").then()
                .statusCode(204);
        blobs.sweep(shared);
        assertTrue(shared.stream().allMatch(blobs::stored));
        as(user).delete("/tinker/api/v1/training_runs/" + model + "/checkpoints/sampler_weights/s1").then()
                .statusCode(204);
        blobs.sweep(shared);
        assertTrue(shared.stream().allMatch(blobs::stored));
        assertEquals(List.of(300, 301), sample(user, sampler(user, session, 1, second)));
        copy(user, toTeam, null).then().statusCode(404); // the source is gone
        as(user).delete("/tinker/api/v1/training_runs/" + model(second) + "/checkpoints/sampler_weights/s1").then()
                .statusCode(204);
        blobs.sweep(shared);
        // (adapter_config.json has the training state's content, which its checkpoints still use)
        assertEquals(List.of(true, false), shared.stream().map(blobs::stored).toList());
    }

    /**
     * Saved weights with a time to live: from the save, from the copy, or set later (the member role needed); once it
     * has passed, the sweep deletes them and their Fulcrum checkpoint, and a copy keeps its files.
     */
    @Test
    void savedWeightsExpireWhenTheirTimeToLivePasses() throws Exception {
        Catalog.openAiCompatible(BASE, vllm.baseUrl());
        Account user = fixtures.user("tinkerttl");
        Account other = fixtures.user("tinkerttlother");
        Account lead = fixtures.user("tinkerttllead");
        PlatformEntity team = fixtures.team("tinkerttl", lead);
        fixtures.member(team, user, Role.MEMBER);
        Held held = held(user, team.name + "/ttl");
        String model = held.model();
        as(user).body(Map.of("model_id", model, "seq_id", 1, "path", "short", "ttl_seconds", 60))
                .post("/tinker/api/v1/save_weights_for_sampler").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "ttl_seconds")));
        byte[] weights = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
        OffsetDateTime saving = OffsetDateTime.now();
        String saved = TinkerCalls.save(user, held.token(), model, "save_weights_for_sampler",
                Map.of("seq_id", 1, "path", "s1", "ttl_seconds", 3600), weights);
        String kept = save(user, held.token(), model, "save_weights", 2, "state", weights);
        JsonPath listed = checkpoints(user, model);
        assertEquals(List.of("sampler_weights/s1", "weights/state"), listed.getList("checkpoints.checkpoint_id"));
        assertAbout(saving.plusHours(1), listed.getString("checkpoints[0].expires_at"));
        assertEquals(null, listed.getString("checkpoints[1].expires_at"), "kept until deleted");
        String copied = copied(user,
                Map.of("source_path", saved, "destination_project_id", team.name + "/ttl-copies", "ttl_seconds", 7200),
                null);
        assertAbout(OffsetDateTime.now().plusHours(2),
                checkpoints(user, model(copied)).getString("checkpoints[0].expires_at"));

        // set later: from now, or removed with null; the member role needed (a viewer's 403), another's 404
        String ttl = "/tinker/api/v1/training_runs/" + model + "/checkpoints/weights/state/ttl";
        Map<String, Object> day = Map.of("ttl_seconds", 86400);
        as(user).body(day).put(ttl).then().statusCode(204);
        assertAbout(OffsetDateTime.now().plusDays(1), checkpoints(user, model).getString("checkpoints[1].expires_at"));
        as(user).body(new HashMap<>(Map.of())).put(ttl).then().statusCode(422).body("detail[0].loc",
                equalTo(List.of("body", "ttl_seconds")));
        as(user).body(Map.of("ttl_seconds", 315360001L)).put(ttl).then().statusCode(422);
        as(other).body(day).put(ttl).then().statusCode(404);
        fixtures.member(team, user, Role.VIEWER);
        as(user).body(day).put(ttl).then().statusCode(403);
        fixtures.member(team, user, Role.MEMBER);
        Map<String, Object> never = new HashMap<>();
        never.put("ttl_seconds", null);
        as(user).body(never).put(ttl).then().statusCode(204);
        assertEquals(null, checkpoints(user, model).getString("checkpoints[1].expires_at"));

        // expired: the sweep deletes the weights and their Fulcrum checkpoint; a sampling client on them is a 404,
        // the copy (its own checkpoint of the same files) still samples, and keeps the files from the collector
        String trainingModel = run(user, model).getString("fulcrum_model_id");
        List<String> files = blobs.checkpointDigests(trainingModel, 1);
        QuarkusTransaction.requiringNew()
                .run(() -> TinkerCheckpoint.update("expiresAt = ?1 where modelId = ?2 and name = 's1'",
                        OffsetDateTime.now().minusSeconds(1), model));
        expiry.sweep(); // (or the scheduled sweep, which may have taken the row first)
        await().atMost(Duration.ofSeconds(10)).until(
                () -> checkpoints(user, model).getList("checkpoints.checkpoint_id").equals(List.of("weights/state")));
        given().filter(Contract.of("training")).auth().oauth2(user.key())
                .get("/v1/preview/models/" + trainingModel + "/checkpoints").then().statusCode(200)
                .body("data.step", equalTo(List.of(0, 2))); // (step 0: the base)
        as(user).body(Map.of("session_id", held.session(), "sampling_session_seq_id", 5, "model_path", saved))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(404);
        blobs.sweep(files);
        assertTrue(files.stream().allMatch(blobs::stored), "the copy keeps them");
        assertEquals(List.of(300, 301), sample(user, sampler(user, held.session(), 6, copied)));
        as(user).body(Map.of("tinker_path", kept)).post("/tinker/api/v1/weights_info").then().statusCode(200);
    }

    private static JsonPath checkpoints(Account user, String model) {
        return as(user).get("/tinker/api/v1/training_runs/" + model + "/checkpoints").then().statusCode(200).extract()
                .jsonPath();
    }

    /** {@code actual} (an ISO date-time) is {@code expected} within a minute. */
    private static void assertAbout(OffsetDateTime expected, String actual) {
        assertTrue(
                actual != null && Math.abs(Duration.between(expected, OffsetDateTime.parse(actual)).toSeconds()) < 60,
                actual + " is not about " + expected);
    }
}

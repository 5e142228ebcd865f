package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static dev.fulcrum.training.TrainingClient.trajectory;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.arc.Arc;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.SmallLimits;
import dev.fulcrum.worker.ReferenceWorker;

/**
 * The external worker protocol with a short lease, the reference worker, and crash recovery: a job whose executor stops
 * renewing its lease is queued again once, then failed; never left running. This replica runs no built-in executor, so
 * the test decides who claims what ({@link SmallLimits}: also a JSON body limit far below a checkpoint's files).
 */
@QuarkusTest
@TestProfile(SmallLimits.class)
class WorkerProtocolTest {

    static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;

    @Inject
    Fixtures fixtures;

    @Inject
    JobQueue queue;

    @Inject
    JobRunner runner;

    @TestHTTPResource("/")
    URL base;

    private Account user;

    @BeforeEach
    void user() {
        user = fixtures.user("trainer");
        Catalog.openAiCompatible("example/gpu-base", "http://127.0.0.1:9/v1");
        Catalog.openAiCompatible("example/other-base", "http://127.0.0.1:9/v1");
    }

    String job(String baseModel, String name) {
        String model = TrainingClient.register(user, user.name(), "workers", name, baseModel);
        return as(user)
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories",
                                List.of(trajectory("say z", "z", 1), trajectory("say z", "a", 0))))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
    }

    String register(String name, String... baseModels) {
        return TrainingClient.worker(ADMIN).body(Map.of("name", name, "base_models", List.of(baseModels)))
                .post("/api/v1/workers").then().statusCode(201).body("lease_seconds", equalTo(3)).extract().path("id");
    }

    static io.restassured.response.Response upload(String token, String job, String path) {
        return given().filter(Contract.TRAINING).auth().oauth2(token).contentType("application/octet-stream")
                .queryParam("path", path).body(new byte[] { 1 }).put("/api/v1/workers/jobs/" + job + "/checkpoint");
    }

    String status(String job) {
        return as(user).get("/v1/preview/training-jobs/" + job).then().statusCode(200).extract().path("status");
    }

    @Test
    void theReferenceWorkerRunsAJobThroughTheProtocol() throws Exception {
        String job = job("example/gpu-base", "gpu-agent");
        ReferenceWorker reference = new ReferenceWorker(base.toString(), ADMIN, "reference",
                List.of("example/gpu-base"));
        assertEquals(job, reference.runOnce(5));
        List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofSeconds(30));
        assertEquals("training_started", events.get(0).get("type"));
        assertEquals("training_ended", events.get(events.size() - 1).get("type"), events.toString());
        as(user).get("/v1/preview/training-jobs/" + job).then().body("status", equalTo("succeeded"))
                .body("checkpoint_step", equalTo(1));
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key())
                .get("/api/v1/entities/" + user.name()
                        + "/projects/workers/artifacts/collections/gpu-agent/versions/step1")
                .then().statusCode(200).body("aliases", hasItem("latest")).body("files.path", hasItem("model.bin"));
        // the next job starts from step 1's weights
        String next = job("example/gpu-base", "gpu-agent");
        assertEquals(next, reference.runOnce(5));
        as(user).get("/v1/preview/training-jobs/" + next).then().body("checkpoint_step", equalTo(2));
    }

    @Test
    void tokensAreScopedToTheirJobAndWorkersNeedAnAdministrator() {
        TrainingClient.worker(user.key()).body(Map.of("name", "rogue", "base_models", List.of("example/gpu-base")))
                .post("/api/v1/workers").then().statusCode(403).contentType(containsString("problem+json"));
        TrainingClient.worker(ADMIN).body(Map.of("name", "bad", "base_models", List.of("fulcrum-tiny")))
                .post("/api/v1/workers").then().statusCode(422);
        String workerId = register("scoped", "example/other-base");
        TrainingClient.worker(user.key()).post("/api/v1/workers/" + workerId + "/claim?wait=0").then().statusCode(403);
        TrainingClient.worker(ADMIN).post("/api/v1/workers/worker-none/claim?wait=0").then().statusCode(404);
        String first = job("example/other-base", "scoped-a");
        String second = job("example/other-base", "scoped-b");
        String token = TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=0").then()
                .statusCode(200).body("job_id", equalTo(first)).body("attempt", equalTo(1))
                .body("base_checkpoint.step", equalTo(0))
                .body("base_checkpoint.files[0].path", equalTo("checkpoint.json")).extract().path("token");
        TrainingClient.worker(token).get("/api/v1/workers/jobs/" + first + "/input").then().statusCode(200)
                .body("kind", equalTo("rl")).body("trajectory_groups[0].trajectories[0].reward", equalTo(1.0f));
        TrainingClient.worker(token).get("/api/v1/workers/jobs/" + second + "/input").then().statusCode(401);
        TrainingClient.worker(user.key()).get("/api/v1/workers/jobs/" + first + "/input").then().statusCode(401);
        given().filter(Contract.TRAINING).get("/api/v1/workers/jobs/" + first + "/input").then().statusCode(401);
        TrainingClient.worker(token).post("/api/v1/workers/jobs/" + first + "/finish").then().statusCode(422);
        // the checkpoint is one directory tree: no path that is a file and a directory, no '.' or '..' segments
        // the contract's rule, answered in its own words (x-pattern-message) before the job is looked at
        for (String path : List.of(".", "a/./b", "..", "a/../b", "/abs", "a//b", "a b")) {
            upload(token, first, path).then().statusCode(422).body("errors[0].field", equalTo("path"))
                    .body("errors[0].message", equalTo("Must be a relative file path of letters, digits, '_', '.', '-'"
                            + " and '/', without '.' or '..' segments"));
        }
        upload(token, first, "a".repeat(513)).then().statusCode(422).body("errors[0].field", equalTo("path"))
                .body("errors[0].message", equalTo("Must be at most 512 characters"));
        upload(token, first, "nested").then().statusCode(200);
        upload(token, first, "nested/inner.bin").then().statusCode(422).body("detail", containsString("nested"));
        upload(token, first, "deep/inner.bin").then().statusCode(200);
        upload(token, first, "deep").then().statusCode(422).body("detail", containsString("directory"));
        TrainingClient.worker(token).body(Map.of("error_message", "CUDA out of memory"))
                .post("/api/v1/workers/jobs/" + first + "/fail").then().statusCode(200)
                .body("status", equalTo("failed")).body("error", equalTo("CUDA out of memory"));
        TrainingClient.worker(token).post("/api/v1/workers/jobs/" + first + "/heartbeat").then().statusCode(409);
        List<Map<String, Object>> events = TrainingClient.events(user, first, Duration.ofSeconds(5));
        assertEquals("CUDA out of memory", ((Map<?, ?>) events.get(0).get("data")).get("error_message"));
    }

    @Test
    void aWorkerThatWentAwayDuringItsLongPollIsHandedNoJob() throws Exception {
        // a base model of its own (SmallLimits), so that no other test's queued job is in the way
        Catalog.openAiCompatible("example/gone-base", "http://127.0.0.1:9/v1");
        String workerId = register("gone", "example/gone-base");
        // the worker asks, then stops (its connection closes) while the server still waits for a job for it
        try (Socket gone = new Socket("localhost", io.restassured.RestAssured.port)) {
            gone.getOutputStream()
                    .write(("POST /api/v1/workers/" + workerId + "/claim?wait=10 HTTP/1.1\r\n"
                            + "Host: localhost\r\nAuthorization: Bearer " + ADMIN + "\r\nContent-Length: 0\r\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
            gone.getOutputStream().flush();
            Thread.sleep(500);
        }
        String job = job("example/gone-base", "gone-agent");
        Thread.sleep(1500);
        assertEquals("queued", status(job)); // not taken by the claim nobody waits for any more
        TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=5").then().statusCode(200)
                .body("job_id", equalTo(job)).body("attempt", equalTo(1));
    }

    @Test
    void anExpiredLeaseRequeuesOnceThenFails() {
        String workerId = register("sleepy", "example/gpu-base");
        String job = job("example/gpu-base", "sleepy-agent");
        String firstToken = TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=5").then()
                .statusCode(200).body("job_id", equalTo(job)).extract().path("token");
        assertEquals("running", status(job));
        TrainingClient.worker(firstToken).post("/api/v1/workers/jobs/" + job + "/heartbeat").then().statusCode(200)
                .body("cancel_requested", equalTo(false));
        // the worker dies: no heartbeat; the lease (3 s) runs out and the job is queued again
        await("job re-queued").atMost(Duration.ofSeconds(15)).until(() -> status(job).equals("queued"));
        TrainingClient.worker(firstToken).post("/api/v1/workers/jobs/" + job + "/heartbeat").then().statusCode(409);
        String secondToken = TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=5").then()
                .statusCode(200).body("attempt", equalTo(2)).extract().path("token");
        TrainingClient.worker(firstToken).get("/api/v1/workers/jobs/" + job + "/input").then().statusCode(409);
        TrainingClient.worker(secondToken).body(Map.of("type", "training_started", "data", Map.of("num_sequences", 3)))
                .post("/api/v1/workers/jobs/" + job + "/events").then().statusCode(200);
        // the second attempt dies too: the job fails for good
        await("job failed").atMost(Duration.ofSeconds(15)).until(() -> status(job).equals("failed"));
        List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofSeconds(5));
        Map<String, Object> failed = events.get(events.size() - 1);
        assertEquals("training_failed", failed.get("type"));
        assertTrue(((Map<?, ?>) failed.get("data")).get("error_message").toString().contains("lease"),
                events.toString());
        as(user).get("/v1/preview/training-jobs/" + job).then().body("error", containsString("attempt 2 of 2"));
    }

    @Test
    void aCpuJobOfACrashedReplicaIsRerunFromTheLatestCheckpoint() {
        String job = job("fulcrum-tiny", "crashy");
        // a replica claims the job and dies before finishing it
        JobQueue.Claimed claimed = inRequest(() -> queue.claim("cpu", "crashed-replica", null));
        while (claimed != null && !claimed.id().equals(job)) { // CPU jobs left queued by earlier runs on this database
            JobQueue.Claimed other = claimed;
            inRequest(() -> {
                queue.fail(other.id(), other.attempt(), "left over");
                return null;
            });
            claimed = inRequest(() -> queue.claim("cpu", "crashed-replica", null));
        }
        assertNotNull(claimed);
        assertEquals(job, claimed.id());
        assertEquals("running", status(job));
        await("job re-queued after the crash").atMost(Duration.ofSeconds(15)).until(() -> status(job).equals("queued"));
        // another replica's executor picks it up and runs it to the end
        assertTrue(inRequest(() -> runner.runNext("replica-2")));
        as(user).get("/v1/preview/training-jobs/" + job).then().body("status", equalTo("succeeded"))
                .body("checkpoint_step", equalTo(1));
        List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofSeconds(5));
        assertEquals("training_ended", events.get(events.size() - 1).get("type"));
    }

    /** The claim of {@code job}, failing the jobs that other tests left queued before it. */
    JsonPath claim(String workerId, String job) {
        while (true) {
            JsonPath claim = TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=5").then()
                    .statusCode(200).extract().jsonPath();
            if (claim.getString("job_id").equals(job)) {
                return claim;
            }
            TrainingClient.worker(claim.getString("token")).body(Map.of("error_message", "left over"))
                    .post("/api/v1/workers/jobs/" + claim.getString("job_id") + "/fail").then().statusCode(200);
        }
    }

    /**
     * A worker stores what it needs to continue from a checkpoint beside the adapter (fulcrum-worker: the optimizer's
     * state, {@code optimizer.pt}): every uploaded file is a file of the checkpoint, listed in the next claim with the
     * digest its upload answered (the worker compares them to know that the state it holds is that checkpoint's), and
     * downloaded when asked for.
     */
    @Test
    void everyFileOfACheckpointComesBackInTheNextClaimWithTheDigestOfItsUpload() throws Exception {
        // optimizer.pt is larger than any JSON body may be: a checkpoint's file is bounded by its own limit
        String workerId = register("keeper", "example/gpu-base");
        String first = job("example/gpu-base", "keeper-agent");
        String token = claim(workerId, first).getString("token");
        Map<String, byte[]> files = Map.of("adapter_config.json", "{\"r\": 4}".getBytes(StandardCharsets.UTF_8),
                "adapter_model.safetensors", new byte[] { 1, 2, 3 }, "optimizer.pt",
                new byte[SmallLimits.JSON_LIMIT * 2]);
        Map<String, String> digests = new HashMap<>();
        for (Map.Entry<String, byte[]> file : files.entrySet()) {
            String digest = given().filter(Contract.TRAINING).auth().oauth2(token)
                    .contentType("application/octet-stream").queryParam("path", file.getKey()).body(file.getValue())
                    .put("/api/v1/workers/jobs/" + first + "/checkpoint").then().statusCode(200)
                    .body("size", equalTo(file.getValue().length)).extract().path("digest");
            assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file.getValue())),
                    digest);
            digests.put(file.getKey(), digest);
        }
        TrainingClient.worker(token).body(Map.of("metrics", Map.of("loss", 0.5)))
                .post("/api/v1/workers/jobs/" + first + "/finish").then().statusCode(200)
                .body("status", equalTo("succeeded")).body("checkpoint_step", equalTo(1));

        String next = job("example/gpu-base", "keeper-agent");
        JsonPath claim = claim(workerId, next);
        assertEquals(1, claim.getInt("base_checkpoint.step"));
        Map<String, String> listed = new HashMap<>();
        for (Map<String, Object> file : claim.<Map<String, Object>> getList("base_checkpoint.files")) {
            listed.put((String) file.get("path"), (String) file.get("digest"));
        }
        assertEquals(digests, listed);
        for (Map.Entry<String, byte[]> file : files.entrySet()) {
            byte[] content = given().filter(Contract.TRAINING).auth().oauth2(claim.getString("token"))
                    .queryParam("path", file.getKey()).get("/api/v1/workers/jobs/" + next + "/base-checkpoint").then()
                    .statusCode(200).extract().asByteArray();
            assertArrayEquals(file.getValue(), content, file.getKey());
        }
        // ended, so that no later claim of another test gets it back when its lease runs out
        TrainingClient.worker(claim.getString("token")).body(Map.of("error_message", "files checked"))
                .post("/api/v1/workers/jobs/" + next + "/fail").then().statusCode(200);
    }

    @Test
    void systemCheckReportsTheQueues() {
        // this replica runs no built-in executor
        String waiting = job("fulcrum-tiny", "waiting");
        given().filter(Contract.TRAINING).auth().oauth2(ADMIN).get("/v1/system-check").then().statusCode(503)
                .body("cpu_queue.success", equalTo(false))
                .body("cpu_queue.errors[0]", containsString("no built-in CPU executor"))
                .body("cpu_queue.queue_depth", org.hamcrest.Matchers.greaterThanOrEqualTo(1));
        String workerId = register("present", "example/gpu-base");
        TrainingClient.worker(ADMIN).post("/api/v1/workers/" + workerId + "/claim?wait=0").then()
                .statusCode(org.hamcrest.Matchers.oneOf(200, 204));
        given().filter(Contract.TRAINING).auth().oauth2(ADMIN).get("/v1/system-check").then().body("gpu_queue.success",
                equalTo(true));
    }

    static <T> T inRequest(Supplier<T> work) {
        var context = Arc.container().requestContext();
        context.activate();
        try {
            return work.get();
        } finally {
            context.terminate();
        }
    }
}

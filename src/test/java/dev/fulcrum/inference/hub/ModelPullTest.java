package dev.fulcrum.inference.hub;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.inference.Inference;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.FakeHubPort;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.RealModels;

/**
 * Models by name: pulled from a fake Hugging Face Hub ({@link FakeHub}, two origins: the Hub and the file server it
 * redirects downloads to), checked against the sha256 the Hub states, stored by digest, resumed after a cut and after a
 * restart, with the Hub's errors in words.
 */
@QuarkusTest
class ModelPullTest {

    private static final String SMOL_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF";
    private static final String SMOL_FILE = "smollm2-135m-instruct-q4_1.gguf";
    private static FakeHub hub;
    private static FakeHub.Blob smol;

    @Inject
    Fixtures fixtures;

    @Inject
    ModelPulls pulls;

    @Inject
    InferenceConfig config;

    @BeforeEach
    void startHub() throws Exception {
        if (hub != null) {
            return;
        }
        hub = new FakeHub(ConfigProvider.getConfig().getValue(FakeHubPort.PORT_PROPERTY, Integer.class));
        smol = FakeHub.file(RealModels.smolLm2());
        hub.repo(SMOL_REPO, "open",
                Map.of(SMOL_FILE, smol, "README.md", FakeHub.random(100, 1), "config.json", FakeHub.random(50, 2)));
        hub.repo("fulcrum-test/gated-GGUF", "gated", Map.of("gated-Q4_K_M.gguf", FakeHub.random(1000, 3)));
        hub.repo("fulcrum-test/private-GGUF", "private", Map.of("private-Q4_K_M.gguf", FakeHub.random(1000, 4)));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
            hub = null;
        }
    }

    private static RequestSpecification admin() {
        return Inference.asAdmin().urlEncodingEnabled(false);
    }

    private static JsonPath add(String id, String pull, int status) {
        return admin().body(Map.of("id", id, "backend", "gguf", "pull", pull, "max_tokens", 64))
                .post("/api/v1/admin/models").then().statusCode(status).extract().jsonPath();
    }

    /** The model once its pull is in {@code state} (ready or failed), polled. */
    private static JsonPath await(String id, String state) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        JsonPath model;
        do {
            model = admin().get("/api/v1/admin/models/" + id).then().statusCode(200).extract().jsonPath();
            if (state.equals(model.getString("pull.state"))) {
                return model;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < until);
        throw new AssertionError("The pull of " + id + " is not " + state + ": " + model.prettify());
    }

    /** The server's events of a model's pull, oldest first: their types and payloads. */
    private static List<Map<String, Object>> events(String id) {
        List<Map<String, Object>> all = given().filter(Contract.EVENTS).auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY).queryParam("limit", 1000).get("/api/v1/admin/events").then()
                .statusCode(200).extract().jsonPath().getList("events");
        List<Map<String, Object>> mine = new java.util.ArrayList<>(
                all.stream().filter(e -> id.equals(((Map<?, ?>) e.get("payload")).get("model_id"))).toList());
        java.util.Collections.reverse(mine);
        return mine;
    }

    private Path blobs() {
        return config.hub().modelDir().resolve("blobs");
    }

    private List<String> stored() throws Exception {
        if (!Files.isDirectory(blobs())) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(blobs())) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void pulledByNameItKnowsTheCapitalOfFranceAndTwoModelsShareTheFile() throws Exception {
        String id = Fixtures.unique("smol-pulled");
        JsonPath accepted = add(id, "hf.co/" + SMOL_REPO + ":q4_1", 202);
        assertEquals("hf.co/" + SMOL_REPO + ":q4_1", accepted.getString("pull.name"));
        assertEquals("main", accepted.getString("pull.revision"));
        assertEquals(List.of(SMOL_FILE), accepted.getList("pull.files"));
        assertEquals(smol.size(), accepted.getLong("pull.total_bytes"));

        JsonPath ready = await(id, "ready");
        String file = ready.getString("gguf_path");
        assertTrue(file.endsWith("sha256-" + smol.sha256() + ".gguf"), file);
        assertEquals(smol.size(), ready.getLong("pull.completed_bytes"));
        Inference.asAdmin().get("/v1/models").then().statusCode(200).body("data.id", hasItem(id));

        String key = fixtures.user("pulled").key();
        Inference.as(key)
                .body(Map.of("model", id, "temperature", 0, "max_tokens", 32, "messages",
                        List.of(Map.of("role", "user", "content",
                                "What is the capital of France? Answer in one short sentence."))))
                .post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.content", containsString("Paris"));

        // the token went to the Hub, never to the file server it redirected to
        assertTrue(hub.seen.stream().anyMatch(s -> s.origin().equals("hub")
                && ("Bearer " + FakeHub.TOKEN).equals(s.authorization()) && s.path().contains("/resolve/")));
        assertTrue(hub.seen.stream().anyMatch(s -> s.origin().equals("cdn")));
        assertTrue(hub.seen.stream().filter(s -> s.origin().equals("cdn")).allMatch(s -> s.authorization() == null));
        // the file list came in pages
        assertTrue(hub.seen.stream().anyMatch(s -> s.path().contains("cursor=")));

        // a second model of the same file: no download, one file stored
        long sent = hub.served.get(smol.sha256()).get();
        String twin = Fixtures.unique("smol-twin");
        add(twin, "hf.co/" + SMOL_REPO + ":Q4_1", 202);
        assertEquals(file, await(twin, "ready").getString("gguf_path"));
        assertEquals(sent, hub.served.get(smol.sha256()).get());
        assertEquals(1, stored().stream().filter(f -> f.contains(smol.sha256())).count());

        // deleting one keeps the file for the other; deleting both frees it
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);
        assertTrue(Files.exists(Path.of(file)));
        admin().delete("/api/v1/admin/models/" + twin).then().statusCode(204);
        assertFalse(Files.exists(Path.of(file)));
    }

    /**
     * A split GGUF (SmolLM2 in three parts, as {@code gguf-split} writes them) is pulled whole, each part checked
     * against its own LFS digest, and stored under the names llama.cpp finds the parts by from the first.
     */
    @Test
    void aSplitModelIsPulledWholeAndLlamaCppLoadsItFromItsFirstPart() throws Exception {
        List<Path> parts = RealModels.smolLm2Split(3);
        Map<String, FakeHub.Blob> files = new java.util.HashMap<>();
        for (Path part : parts) {
            files.put("Q4_1/" + part.getFileName(), FakeHub.file(part));
        }
        files.put("smollm2-135m-instruct-q8_0.gguf", FakeHub.random(1000, 60));
        hub.repo("fulcrum-test/split-GGUF", "open", files);
        String id = Fixtures.unique("split");
        JsonPath accepted = add(id, "hf.co/fulcrum-test/split-GGUF:Q4_1", 202);
        assertEquals(parts.stream().map(p -> "Q4_1/" + p.getFileName()).toList(), accepted.getList("pull.files"));
        long total = files.values().stream().mapToLong(FakeHub.Blob::size).sum() - 1000;
        assertEquals(total, accepted.getLong("pull.total_bytes"));

        JsonPath ready = await(id, "ready");
        String first = files.get("Q4_1/" + parts.get(0).getFileName()).sha256();
        String file = ready.getString("gguf_path");
        assertTrue(file.endsWith("sha256-" + first + "-00001-of-00003.gguf"), file);
        for (int i = 1; i <= 3; i++) {
            Path stored = Path.of(file.replace("-00001-of-", "-%05d-of-".formatted(i)));
            assertEquals(Files.size(parts.get(i - 1)), Files.size(stored), stored.toString());
            // every part was checked against its own digest, and each was sent once
            String sha = files.get("Q4_1/" + parts.get(i - 1).getFileName()).sha256();
            assertEquals(Files.size(parts.get(i - 1)), hub.served.get(sha).get());
        }
        Inference.asAdmin()
                .body(Map.of("model", id, "temperature", 0, "max_tokens", 16, "messages",
                        List.of(Map.of("role", "user", "content",
                                "What is the capital of France? Answer in one short sentence."))))
                .post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.content", containsString("Paris"));
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);
        assertFalse(Files.exists(Path.of(file)));
    }

    /**
     * Replicas of Fulcrum share the pulls' rows, not always their model directory: a replica that lacks the file of a
     * pull ready elsewhere copies it (the row and the events are the first pull's), and two that share one directory
     * never download one file into it at once.
     */
    @Test
    void aReplicaThatLacksAPulledFileCopiesItAndReplicasSharingTheDirectoryDownloadItOnce() throws Exception {
        FakeHub.Blob file = FakeHub.random(400_000, 80);
        hub.repo("fulcrum-test/replicas-GGUF", "open", Map.of("replicas-Q8_0.gguf", file));
        String id = Fixtures.unique("replicas");
        add(id, "hf.co/fulcrum-test/replicas-GGUF", 202);
        Path stored = Path.of(await(id, "ready").getString("gguf_path"));
        long sent = hub.served.get(file.sha256()).get();
        int told = events(id).size();

        // this replica's directory lacks the file (as one whose model directory is its own): the catalog's refresh
        // finds it so, and the file is copied here while the row stays ready for the others
        Files.delete(stored);
        assertEquals(PullStatus.QUEUED, pulls.pulled().get(id).state());
        assertEquals(PullStatus.READY, io.quarkus.narayana.jta.QuarkusTransaction.requiringNew()
                .call(() -> ModelPull.<ModelPull> findById(id)).state);
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (admin().get("/api/v1/admin/models/" + id).then().extract().jsonPath().getString("gguf_path") == null
                && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        assertEquals(stored.toString(), await(id, "ready").getString("gguf_path"));
        assertEquals(file.sha256(), PulledFiles.sha256(stored));
        assertEquals(sent + file.size(), hub.served.get(file.sha256()).get());
        assertEquals(told, events(id).size(), "a copy tells no events of its own");
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);

        // two replicas sharing one model directory (two stores of it): the second waits for the first's download
        FakeHub.Blob shared = FakeHub.random(300_000, 81);
        String repo = "fulcrum-test/shared-GGUF";
        hub.repo(repo, "open", Map.of("shared-Q8_0.gguf", shared));
        String commit = FakeHub.sha256(repo.getBytes(java.nio.charset.StandardCharsets.UTF_8)).substring(0, 40);
        List<HubFile> files = List.of(new HubFile("shared-Q8_0.gguf", shared.size(), shared.sha256()));
        HubName name = HubName.parse("hf.co/" + repo);
        Path dir = Files.createTempDirectory("shared-model-dir");
        HubHttp http = new HubHttp(config.hub().endpoint(), FakeHub.TOKEN, Duration.ofSeconds(5),
                Duration.ofSeconds(10), 2, Duration.ofMillis(10), Duration.ofMillis(10));
        HubDownloads downloads = new HubDownloads(http);
        java.util.concurrent.ExecutorService replicas = java.util.concurrent.Executors.newFixedThreadPool(2);
        java.util.concurrent.atomic.AtomicInteger downloaded = new java.util.concurrent.atomic.AtomicInteger();
        PulledFiles.Download download = part -> {
            downloaded.incrementAndGet();
            downloads.download(name, "main", commit, files.get(0), part, new HubDownloads.Transfer(), n -> {
            });
            return files.get(0).sha256();
        };
        try {
            FakeHub.Hold hold = hub.holdAt(shared.sha256(), 100_000);
            java.util.concurrent.Future<Path> a = replicas
                    .submit(() -> new PulledFiles(dir).store(files, 0, commit, repo, download));
            assertTrue(hold.awaitReached());
            java.util.concurrent.Future<Path> b = replicas
                    .submit(() -> new PulledFiles(dir).store(files, 0, commit, repo, download));
            // while the first holds the file's lock, the second neither downloads nor finishes
            org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.TimeoutException.class,
                    () -> b.get(500, java.util.concurrent.TimeUnit.MILLISECONDS));
            hold.release(false);
            assertEquals(a.get(30, java.util.concurrent.TimeUnit.SECONDS),
                    b.get(30, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(1, downloaded.get());
            assertEquals(shared.size(), hub.served.get(shared.sha256()).get());
        } finally {
            replicas.shutdownNow();
            downloads.close();
            http.close();
        }
    }

    /** As {@code trainable} makes a configured GGUF file a worker base, so it makes a pulled one. */
    @Test
    void aPulledModelMarkedTrainableIsTrainedByWorkersOnItsFile() throws Exception {
        FakeHub.Blob file = FakeHub.random(150_000, 50);
        hub.repo("fulcrum-test/trainable-GGUF", "open", Map.of("trainable-Q4_K_M.gguf", file));
        String id = Fixtures.unique("trainable-pulled");
        JsonPath accepted = admin().body(
                Map.of("id", id, "backend", "gguf", "pull", "hf.co/fulcrum-test/trainable-GGUF", "trainable", true))
                .post("/api/v1/admin/models").then().statusCode(202).extract().jsonPath();
        assertTrue(accepted.getBoolean("trainable"));
        String path = await(id, "ready").getString("gguf_path");
        assertTrue(path.endsWith("sha256-" + file.sha256() + ".gguf") && Files.exists(Path.of(path)), path);

        // a worker registers for it (the file it is given: gguf_path), a job of a model on it is queued for workers
        String worker = given().filter(Contract.TRAINING).contentType("application/json").auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .body(Map.of("name", Fixtures.unique("pulled-worker"), "base_models", List.of(id)))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        Fixtures.Lab lab = fixtures.lab("pulled-base");
        String[] project = lab.project().split("/");
        String model = given().filter(Contract.TRAINING).contentType("application/json").auth()
                .oauth2(lab.member().key())
                .body(Map.of("entity", project[0], "project", project[1], "name", "on-pulled", "base_model", id))
                .post("/v1/preview/models").then().statusCode(201).extract().path("id");
        Map<String, Object> choice = Map.of("finish_reason", "stop", "index", 0, "logprobs",
                Map.of("content", List.of()), "message", Map.of("role", "assistant", "content", "z"));
        Map<String, Object> trajectory = Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "say z"), choice), "tools", List.of(), "reward", 1, "metrics",
                Map.of(), "metadata", Map.of(), "logs", List.of());
        String job = given().filter(Contract.TRAINING).contentType("application/json").auth().oauth2(lab.member().key())
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory, trajectory)))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .post("/api/v1/workers/" + worker + "/claim?wait=5").then().statusCode(200)
                .body("job_id", equalTo(job));

        // a pulled model not marked trainable is no worker base; only a gguf model is marked here
        String plain = Fixtures.unique("untrainable-pulled");
        assertFalse(add(plain, "hf.co/fulcrum-test/trainable-GGUF", 202).getBoolean("trainable"));
        given().filter(Contract.TRAINING).contentType("application/json").auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .body(Map.of("name", Fixtures.unique("pulled-worker"), "base_models", List.of(plain)))
                .post("/api/v1/workers").then().statusCode(422)
                .body("detail", containsString("Not a worker base model"));
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "openai-compatible", "base_url",
                "http://127.0.0.1:9/v1", "trainable", true)).post("/api/v1/admin/models").then().statusCode(422)
                .body("detail", containsString("Only a gguf model is made trainable"));
        admin().delete("/api/v1/admin/models/" + plain).then().statusCode(204);
    }

    @Test
    void aPullResumesAfterACutAndAfterARestartAndAnswers503Meanwhile() throws Exception {
        FakeHub.Blob model = FakeHub.random(4 << 20, 10);
        hub.repo("fulcrum-test/resume-GGUF", "open",
                Map.of("Resume-Q4_K_M.gguf", model, "Resume-Q8_0.gguf", FakeHub.random(4096, 11),
                        "mmproj-Resume-Q4_K_M.gguf", FakeHub.random(2048, 12), "Resume-IQ2_XS.gguf",
                        FakeHub.random(1024, 13)));
        FakeHub.Hold first = hub.holdAt(model.sha256(), 1 << 20);
        String id = Fixtures.unique("resumed");
        // no tag: Q4_K_M, not the projector
        assertEquals(List.of("Resume-Q4_K_M.gguf"),
                add(id, "hf.co/fulcrum-test/resume-GGUF", 202).getList("pull.files"));
        assertTrue(first.awaitReached());

        // while it downloads: the resource shows it, completions are 503 with the progress, the list leaves it out
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonPath pulling;
        do {
            pulling = admin().get("/api/v1/admin/models/" + id).then().statusCode(200).extract().jsonPath();
        } while (pulling.getLong("pull.completed_bytes") < (1 << 20) && System.nanoTime() < until);
        assertEquals("downloading", pulling.getString("pull.state"));
        assertEquals(1 << 20, pulling.getLong("pull.completed_bytes"));
        assertEquals(4 << 20, pulling.getLong("pull.total_bytes"));
        Inference.asAdmin().body(Inference.chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(503)
                .body("error.code", equalTo("model_pulling"))
                .body("error.message", allOf(containsString("still being pulled"), containsString("(25%)")));
        Inference.asAdmin().get("/v1/models").then().statusCode(200).body("data.id", not(hasItem(id)));

        // Fulcrum stops mid-pull (as killed: the row and the partial file stay), then starts again
        pulls.suspendAll();
        first.release(true);
        FakeHub.Hold second = hub.holdAt(model.sha256(), 3 << 20);
        pulls.resumeUnfinished();
        assertTrue(second.awaitReached());
        until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (admin().get("/api/v1/admin/models/" + id).then().extract().jsonPath()
                .getLong("pull.completed_bytes") < (3 << 20) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        // the connection is cut at 3 MiB: the download goes on from there
        second.release(true);
        await(id, "ready");

        List<String> ranges = hub.seen.stream()
                .filter(s -> s.origin().equals("cdn") && s.path().contains(model.sha256())).map(FakeHub.Seen::range)
                .toList();
        assertEquals(3, ranges.size(), ranges.toString());
        assertEquals(null, ranges.get(0));
        assertEquals("bytes=" + (1 << 20) + "-", ranges.get(1));
        assertEquals("bytes=" + (3 << 20) + "-", ranges.get(2));
        long twice = hub.served.get(model.sha256()).get() - model.size();
        assertEquals(0, twice, "bytes sent twice");

        // the events: progress (throttled), then completed with the digest
        List<Map<String, Object>> events = events(id);
        List<Object> types = events.stream().map(e -> e.get("type")).toList();
        assertTrue(types.contains("MODEL_PULL_PROGRESS"), types.toString());
        assertEquals("MODEL_PULL_COMPLETED", types.get(types.size() - 1), types.toString());
        assertTrue(types.size() <= 12, types.toString());
        Map<?, ?> completed = (Map<?, ?>) events.get(events.size() - 1).get("payload");
        assertEquals(List.of(model.sha256()), completed.get("sha256"));
        assertEquals("hf.co/fulcrum-test/resume-GGUF", completed.get("name"));
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);
    }

    @Test
    void aCorruptedByteFailsTheCheckAndDeletesTheFileAndTheFailedPullIsRetried() throws Exception {
        FakeHub.Blob good = FakeHub.random(300_000, 20);
        hub.repo("fulcrum-test/corrupt-GGUF", "open", Map.of("corrupt-Q8_0.gguf", FakeHub.corrupted(good)));
        String id = Fixtures.unique("corrupt");
        add(id, "hf.co/fulcrum-test/corrupt-GGUF", 202);
        JsonPath failed = await(id, "failed");
        String error = failed.getString("pull.error");
        assertTrue(error.contains(good.sha256()) && error.contains("sha256") && error.contains("deleted"), error);
        byte[] bad = good.bytes().clone();
        bad[good.bytes().length / 2] ^= 0x01;
        assertTrue(error.contains(FakeHub.sha256(bad)), error);
        assertTrue(stored().stream().noneMatch(f -> f.contains(good.sha256())));
        try (Stream<Path> partial = Files.list(config.hub().modelDir().resolve("partial"))) {
            assertTrue(partial.map(p -> p.getFileName().toString()).filter(name -> name.endsWith(".part"))
                    .noneMatch(name -> name.contains(good.sha256())));
        }
        Inference.asAdmin().body(Inference.chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(503)
                .body("error.code", equalTo("model_pull_failed"));
        List<Map<String, Object>> events = events(id);
        assertEquals("MODEL_PULL_FAILED", events.get(events.size() - 1).get("type"));
        assertEquals(error, ((Map<?, ?>) events.get(events.size() - 1).get("payload")).get("error"));

        // the file server mended, the failed pull is retried without deleting the model: server administrators only
        hub.repo("fulcrum-test/corrupt-GGUF", "open", Map.of("corrupt-Q8_0.gguf", good));
        String retry = "/api/v1/admin/models/" + id + "/pull";
        Inference.as(fixtures.user("not-admin").key()).post(retry).then().statusCode(403);
        assertTrue(List.of("queued", "downloading", "verifying", "ready")
                .contains(admin().post(retry).then().statusCode(202).extract().jsonPath().getString("pull.state")));
        JsonPath ready = await(id, "ready");
        assertTrue(ready.getString("gguf_path").endsWith("sha256-" + good.sha256() + ".gguf"));
        assertEquals(null, ready.getString("pull.error"));
        admin().post(retry).then().statusCode(409).body("detail", containsString("did not fail"));
        admin().post("/api/v1/admin/models/" + Fixtures.unique("none") + "/pull").then().statusCode(404);
        String local = Fixtures.unique("local");
        admin().body(Map.of("id", local, "backend", "gguf", "gguf_path", "/nonexistent/model.gguf"))
                .post("/api/v1/admin/models").then().statusCode(201);
        admin().post("/api/v1/admin/models/" + local + "/pull").then().statusCode(409).body("detail",
                containsString("not pulled by name"));
        admin().delete("/api/v1/admin/models/" + local).then().statusCode(204);
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);
    }

    /** {@code scripts/pull.sh}, as a user runs it: exit status and output. */
    private static String[] pullSh(String name, String id) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("bash", "scripts/pull.sh", name, id).redirectErrorStream(true);
        builder.environment().put("FULCRUM_URL", "http://localhost:" + io.restassured.RestAssured.port);
        builder.environment().put("FULCRUM_API_KEY", EmbeddedPostgresResource.ADMIN_KEY);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), output);
        return new String[] { String.valueOf(process.exitValue()), output };
    }

    /** The terminal's command: a failed pull says so and how to retry; the same command again retries it. */
    @Test
    void theTerminalCommandRetriesAFailedPullWhenRunAgain() throws Exception {
        FakeHub.Blob good = FakeHub.random(200_000, 90);
        String repo = "fulcrum-test/terminal-GGUF";
        hub.repo(repo, "open", Map.of("terminal-Q8_0.gguf", FakeHub.corrupted(good)));
        String id = Fixtures.unique("terminal");
        String[] failed = pullSh("hf.co/" + repo, id);
        assertEquals("1", failed[0], failed[1]);
        assertTrue(failed[1].contains("pulling hf.co/" + repo + " as model " + id) && failed[1].contains("sha256")
                && failed[1].contains("the same command again retries the pull"), failed[1]);

        hub.repo(repo, "open", Map.of("terminal-Q8_0.gguf", good));
        String[] again = pullSh("hf.co/" + repo, id);
        assertEquals("0", again[0], again[1]);
        assertTrue(again[1].contains("its pull had failed: pulling hf.co/" + repo + " again")
                && again[1].contains("success: model " + id + " is served from "), again[1]);
        assertEquals("ready", admin().get("/api/v1/admin/models/" + id).then().statusCode(200).extract().jsonPath()
                .getString("pull.state"));
        admin().delete("/api/v1/admin/models/" + id).then().statusCode(204);
    }

    /** The pulls of configured models, as each start makes them: a failed one is tried again at the next start. */
    @Test
    void aConfiguredPullIsMadeAtStartAndAFailedOneTriedAgainAtTheNext() throws Exception {
        String id = Fixtures.unique("configured");
        pulls.pullConfigured(id, "hf.co/fulcrum-test/later-GGUF:Q8_0", "main");
        pulls.resumeUnfinished();
        PullStatus failed = awaitStatus(id, PullStatus.FAILED);
        assertTrue(failed.error().contains("does not exist, or it is private or gated"), failed.error());

        FakeHub.Blob file = FakeHub.random(200_000, 40);
        hub.repo("fulcrum-test/later-GGUF", "open", Map.of("later-Q8_0.gguf", file));
        pulls.pullConfigured(id, "hf.co/fulcrum-test/later-GGUF:Q8_0", "main"); // the next start
        pulls.resumeUnfinished();
        PullStatus ready = awaitStatus(id, PullStatus.READY);
        assertEquals(List.of("later-Q8_0.gguf"), ready.files());
        assertTrue(pulls.pulled().get(id).ggufPath().endsWith("sha256-" + file.sha256() + ".gguf"));
        // a start with the same name and the file in place pulls nothing again
        pulls.pullConfigured(id, "hf.co/fulcrum-test/later-GGUF:Q8_0", "main");
        assertEquals(PullStatus.READY, pulls.status(id).orElseThrow().state());

        io.quarkus.narayana.jta.QuarkusTransaction.requiringNew().run(() -> pulls.forget(id));
        pulls.freeUnused();
        assertTrue(stored().stream().noneMatch(f -> f.contains(file.sha256())));
    }

    private PullStatus awaitStatus(String id, String state) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        PullStatus status;
        do {
            status = pulls.status(id).orElseThrow();
            if (state.equals(status.state())) {
                return status;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < until);
        throw new AssertionError("The pull of " + id + " is not " + state + ": " + status);
    }

    @Test
    void filesListedWithoutTheirSha256AreStoredApartAndCheckedAgainstTheDownloadsDigest() throws Exception {
        FakeHub.Blob one = FakeHub.random(100, 40);
        FakeHub.Blob two = FakeHub.random(100, 41);
        for (Map.Entry<String, FakeHub.Blob> repo : Map.of("plain-one-GGUF", one, "plain-two-GGUF", two).entrySet()) {
            hub.repo("fulcrum-test/" + repo.getKey(), "open", Map.of("Plain-Q8_0.gguf", repo.getValue()));
            hub.withoutLfs("fulcrum-test/" + repo.getKey());
        }
        String first = Fixtures.unique("plain");
        String second = Fixtures.unique("plain");
        add(first, "hf.co/fulcrum-test/plain-one-GGUF", 202);
        add(second, "hf.co/fulcrum-test/plain-two-GGUF", 202);
        // one path each (not one name for every file of unknown sha256), each holding its own bytes
        Path a = Path.of(await(first, "ready").getString("gguf_path"));
        Path b = Path.of(await(second, "ready").getString("gguf_path"));
        assertNotEquals(a, b);
        assertEquals(one.sha256(), PulledFiles.sha256(a));
        assertEquals(two.sha256(), PulledFiles.sha256(b));
        admin().delete("/api/v1/admin/models/" + first).then().statusCode(204);
        admin().delete("/api/v1/admin/models/" + second).then().statusCode(204);
    }

    @Test
    void theHubsRefusalsAreAnsweredInWordsAndOnlyAdminsPull() {
        hub.repo("fulcrum-test/tags-GGUF", "open", Map.of("Tags-Q4_K_M.gguf", FakeHub.random(100, 30), "Tags-Q8_0.gguf",
                FakeHub.random(100, 31), "mmproj-Tags-F16.gguf", FakeHub.random(100, 32)));
        String key = fixtures.user("not-admin").key();
        Inference.as(key)
                .body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "pull", "hf.co/fulcrum-test/tags-GGUF"))
                .post("/api/v1/admin/models").then().statusCode(403);
        given().filter(Contract.EVENTS).auth().oauth2(key).get("/api/v1/admin/events").then().statusCode(403);

        String tags = add(Fixtures.unique("x"), "hf.co/fulcrum-test/tags-GGUF:Q2_K", 404).getString("detail");
        assertTrue(tags.contains("Q2_K") && tags.contains("its tags: Q4_K_M, Q8_0"), tags);
        assertTrue(add(Fixtures.unique("x"), "hf.co/fulcrum-test/missing-GGUF", 502).getString("detail")
                .contains("does not exist, or it is private or gated"));
        String gated = add(Fixtures.unique("x"), "hf.co/fulcrum-test/gated-GGUF", 502).getString("detail");
        assertTrue(gated.contains("is gated") && gated.contains("answered 403"), gated);
        String hidden = add(Fixtures.unique("x"), "hf.co/fulcrum-test/private-GGUF", 502).getString("detail");
        assertTrue(hidden.contains("answered 401") && hidden.contains("private"), hidden);
        String revision = admin()
                .body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "pull", "hf.co/fulcrum-test/tags-GGUF",
                        "revision", "v9"))
                .post("/api/v1/admin/models").then().statusCode(404).extract().jsonPath().getString("detail");
        assertTrue(revision.contains("revision v9") && revision.contains("does not exist"), revision);

        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "pull", "fulcrum-test/tags-GGUF"))
                .post("/api/v1/admin/models").then().statusCode(422);
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "pull", "hf.co/fulcrum-test/tags-GGUF",
                "gguf_path", "/tmp/x.gguf")).post("/api/v1/admin/models").then().statusCode(422);
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "builtin", "pull", "hf.co/fulcrum-test/tags-GGUF"))
                .post("/api/v1/admin/models").then().statusCode(422);
    }
}

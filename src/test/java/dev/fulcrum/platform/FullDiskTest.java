package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.inference.Inference;
import dev.fulcrum.inference.hub.FakeHub;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.FakeHubPort;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;
import dev.fulcrum.support.PrometheusText;
import dev.fulcrum.wandb.WandbMultipartTest;

/**
 * A full disk, for real: the blob store and the multipart spool are small tmpfs mounts ({@link SmallDisks}), filled to
 * the last byte before each upload. Every door that writes a file refuses with a 507 in its own shape (checked against
 * its contract), keeps nothing of the upload (no version, no run file, no draft file, no checkpoint file, no blob under
 * the digest, no temporary file), and once the space is freed the same upload succeeds.
 */
@QuarkusTest
@TestProfile(FullDiskTest.SmallDisksProfile.class)
class FullDiskTest extends LabTest {

    public static class SmallDisksProfile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("fulcrum.training.cpu-executor", "false", "fulcrum.training.worker-base-models",
                    "example/full-disk-base");
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(SmallDisks.class));
        }
    }

    static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;

    @Inject
    BlobStore blobs;

    @Inject
    EntityManager em;

    private final List<Path> ballasts = new ArrayList<>();

    static Path blobDir() {
        return Path.of(ConfigProvider.getConfig().getValue("fulcrum.artifacts.blob-dir", String.class));
    }

    static Path uploadsDir() {
        return Path.of(ConfigProvider.getConfig().getValue("quarkus.http.body.uploads-directory", String.class));
    }

    /** Fills the file system of {@code dir} to the last byte. */
    private void fill(Path dir) throws IOException {
        ballasts.add(SmallDisks.fill(dir));
    }

    /** Frees the space the ballast took: the operator's move. */
    private void free() throws IOException {
        for (Path ballast : ballasts) {
            Files.deleteIfExists(ballast);
        }
        ballasts.clear();
    }

    @AfterEach
    void freeSpace() throws IOException {
        free();
    }

    private static byte[] content(int size) {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        return bytes;
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static String md5(byte[] bytes) throws Exception {
        return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(bytes));
    }

    /** The blob store's files under way: an upload, a join of parts, a part (the parts of open uploads are not). */
    private static final Pattern TEMPORARY = Pattern.compile("(upload-|join-).*\\.part|part-.*\\.tmp");

    /** The blob store keeps no blob of {@code bytes} and no temporary file: nothing of a refused upload stays. */
    private void nothingStored(byte[] bytes) throws Exception {
        assertTrue(blobs.size(sha256(bytes)).isEmpty(), "no blob under the upload's digest");
        try (Stream<Path> files = Files.walk(blobDir())) {
            List<String> left = files.filter(Files::isRegularFile)
                    .filter(file -> TEMPORARY.matcher(file.getFileName().toString()).matches())
                    .map(file -> blobDir().relativize(file).toString()).toList();
            assertEquals(List.of(), left, "no temporary file left in the blob store");
        }
    }

    // the artifacts API: a version's upload

    private static RequestSpecification artifacts(Account account) {
        return given().filter(Contract.ARTIFACTS).auth().oauth2(account.key());
    }

    private Response uploadVersion(String collection, byte[] bytes) {
        return artifacts(member).contentType("multipart/form-data").multiPart("type", "model")
                .multiPart("file", "weights.bin", bytes, "application/octet-stream")
                .post(collectionPath(collection) + "/versions");
    }

    private String collectionPath(String collection) {
        return "/api/v1/entities/" + team.name + "/projects/disk/artifacts/collections/" + collection;
    }

    @Test
    void anArtifactVersionUploadIsRefusedWithAProblemAndMadeOnceSpaceIsFree() throws Exception {
        byte[] bytes = content(256 * 1024);
        fill(blobDir());
        double refused = PrometheusText.fetch().sum("fulcrum_storage_full_total", Map.of("store", "files"));

        uploadVersion("weights", bytes).then().statusCode(507).contentType("application/problem+json")
                .body("status", equalTo(507)).body("title", equalTo("Insufficient Storage"))
                .body("detail", containsString("storage is full"));
        assertEquals(refused + 1, PrometheusText.fetch().sum("fulcrum_storage_full_total", Map.of("store", "files")));

        artifacts(member).get(collectionPath("weights")).then().statusCode(404);
        nothingStored(bytes);

        free();
        uploadVersion("weights", bytes).then().statusCode(201).body("version", equalTo("v0")).body("files[0].digest",
                equalTo(sha256(bytes)));
        assertEquals(bytes.length, blobs.size(sha256(bytes)).orElseThrow());
    }

    @Test
    void aFullMultipartSpoolRefusesTheUploadInTheSameShape() throws Exception {
        byte[] bytes = content(128 * 1024);
        fill(uploadsDir());

        uploadVersion("spooled", bytes).then().statusCode(507).contentType("application/problem+json").body("detail",
                containsString("storage is full"));

        artifacts(member).get(collectionPath("spooled")).then().statusCode(404);
        nothingStored(bytes);
        try (Stream<Path> files = Files.list(uploadsDir())) {
            assertEquals(List.of("ballast"), files.map(file -> file.getFileName().toString()).toList(),
                    "no spooled part left");
        }

        free();
        uploadVersion("spooled", bytes).then().statusCode(201).body("files[0].digest", equalTo(sha256(bytes)));
    }

    // the W&B protocol: a run's file, an artifact's file, an artifact file's parts

    private static JsonPath graphql(Account account, String query, Map<String, Object> variables) {
        return given().filter(Contract.of("wandb")).auth().preemptive().basic("api", account.key())
                .contentType(ContentType.JSON).body(Map.of("query", query, "variables", variables)).post("/graphql")
                .then().statusCode(200).extract().jsonPath();
    }

    private static Response putSigned(String url, byte[] bytes) {
        return given().filter(Contract.of("wandb")).contentType("application/octet-stream").body(bytes).put(url);
    }

    @Test
    void aWandbRunFileIsRefusedInGraphqlsShapeAndStoredOnceSpaceIsFree() throws Exception {
        given().filter(Contract.RUNS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "r1")).post("/api/v1/entities/" + team.name + "/projects/disk/runs").then()
                .statusCode(201);
        String url = graphql(member, """
                mutation CreateRunFiles($entity: String!, $project: String!, $run: String!, $files: [String!]!) {
                  createRunFiles(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) {
                    files { name uploadUrl }
                  }
                }""", Map.of("entity", team.name, "project", "disk", "run", "r1", "files", List.of("model.bin")))
                .getString("data.createRunFiles.files[0].uploadUrl");
        byte[] bytes = content(200 * 1024);
        fill(blobDir());

        putSigned(url, bytes).then().statusCode(507).contentType(ContentType.JSON).body("errors[0].message",
                containsString("storage is full"));

        String files = "/api/v1/entities/" + team.name + "/projects/disk/runs/r1/files";
        given().filter(Contract.RUNS).auth().oauth2(member.key()).get(files).then().statusCode(200).body("files.name",
                not(hasItem("model.bin")));
        nothingStored(bytes);

        free();
        putSigned(url, bytes).then().statusCode(200);
        given().filter(Contract.RUNS).auth().oauth2(member.key()).get(files).then().statusCode(200)
                .body("files.find { it.name == 'model.bin' }.size", equalTo(bytes.length));
    }

    private String draft(String collection) {
        return graphql(member, WandbMultipartTest.CREATE_ARTIFACT,
                Map.of("input",
                        Map.of("entityName", team.name, "projectName", "disk", "artifactTypeName", "model",
                                "artifactCollectionName", collection, "digest", "d")))
                                        .getString("data.createArtifact.artifact.id");
    }

    /** The draft file's blob as recorded: null while it counts as not uploaded. */
    private String draftFileBlob(String name) {
        return QuarkusTransaction.requiringNew()
                .call(() -> (String) em.createNativeQuery("select blob from artifact_draft_files where name = ?1")
                        .setParameter(1, name).getSingleResult());
    }

    @Test
    void aWandbArtifactFileIsRefusedAndCountsAsNotUploaded() throws Exception {
        byte[] bytes = content(300 * 1024);
        String name = Fixtures.unique("file") + ".bin";
        String draft = draft("wandb-single");
        String url = new JsonPath(given().filter(Contract.of("wandb")).auth().preemptive().basic("api", member.key())
                .contentType(ContentType.JSON)
                .body(Map.of("query", WandbMultipartTest.CREATE_FILES, "variables",
                        Map.of("storageLayout", "V2", "artifactFiles",
                                List.of(Map.of("artifactID", draft, "name", name, "md5", md5(bytes))))))
                .post("/graphql").then().statusCode(200).extract().asString())
                        .getString("data.createArtifactFiles.files.edges[0].node.uploadUrl");
        fill(blobDir());

        putSigned(url, bytes).then().statusCode(507).body("errors[0].message", containsString("storage is full"));
        assertEquals(null, draftFileBlob(name));
        nothingStored(bytes);

        free();
        putSigned(url, bytes).then().statusCode(200);
        assertEquals(sha256(bytes), draftFileBlob(name));
    }

    @Test
    void aWandbMultipartUploadIsRefusedPartByPartAndAtItsJoin() throws Exception {
        byte[][] parts = { content(150 * 1024), content(100 * 1024) };
        byte[] whole = new byte[parts[0].length + parts[1].length];
        System.arraycopy(parts[0], 0, whole, 0, parts[0].length);
        System.arraycopy(parts[1], 0, whole, parts[0].length, parts[1].length);
        String name = Fixtures.unique("parts") + ".bin";
        String draft = draft("wandb-parts");

        // a part finds the disk full: 507, and it counts as not uploaded
        JsonPath node = startParts(draft, name, whole, parts);
        List<String> urls = node.getList("uploadMultipartUrls.uploadUrlParts.uploadUrl");
        fill(blobDir());
        putSigned(urls.get(0), parts[0]).then().statusCode(507).body("errors[0].message",
                containsString("storage is full"));
        assertEquals(0L, count("select count(*) from artifact_multipart_parts p join artifact_multipart_uploads u "
                + "on u.id = p.upload_id where u.name = ?1", name));
        free();
        List<String> etags = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            etags.add(putSigned(urls.get(i), parts[i]).then().statusCode(200).extract().header("ETag"));
        }

        // the join finds the disk full: 507 from /graphql, the upload and its parts are gone, no blob is made
        fill(blobDir());
        complete(draft, node, etags).then().statusCode(507).body("errors[0].message",
                containsString("storage is full"));
        assertEquals(0L, count("select count(*) from artifact_multipart_uploads where name = ?1", name));
        assertEquals(null, draftFileBlob(name));
        nothingStored(whole);
        try (Stream<Path> uploads = Files.list(blobDir().resolve("tmp").resolve("parts"))) {
            assertEquals(List.of(), uploads.toList(), "the parts of the refused join are removed");
        }

        // with space again, the SDK's retry (a new upload of the same file) succeeds
        free();
        node = startParts(draft, name, whole, parts);
        urls = node.getList("uploadMultipartUrls.uploadUrlParts.uploadUrl");
        etags.clear();
        for (int i = 0; i < parts.length; i++) {
            etags.add(putSigned(urls.get(i), parts[i]).then().statusCode(200).extract().header("ETag"));
        }
        complete(draft, node, etags).then().statusCode(200).body("data.completeMultipartUploadArtifact.digest",
                equalTo(md5(whole)));
        assertEquals(sha256(whole), draftFileBlob(name));
    }

    private JsonPath startParts(String draft, String name, byte[] whole, byte[][] parts) throws Exception {
        List<Map<String, Object>> input = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            input.add(Map.of("partNumber", i + 1, "hexMD5",
                    HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(parts[i]))));
        }
        return new JsonPath(given().filter(Contract.of("wandb")).auth().preemptive().basic("api", member.key())
                .contentType(ContentType.JSON)
                .body(Map.of("query", WandbMultipartTest.CREATE_FILES, "variables",
                        Map.of("storageLayout", "V2", "artifactFiles",
                                List.of(Map.of("artifactID", draft, "name", name, "md5", md5(whole), "uploadPartsInput",
                                        input)))))
                .post("/graphql").then().statusCode(200).extract().asString())
                        .setRootPath("data.createArtifactFiles.files.edges[0].node");
    }

    private Response complete(String draft, JsonPath node, List<String> etags) {
        List<Map<String, Object>> parts = new ArrayList<>();
        for (int i = 0; i < etags.size(); i++) {
            parts.add(Map.of("partNumber", i + 1, "hexMD5", etags.get(i)));
        }
        return given().filter(Contract.of("wandb")).auth().preemptive().basic("api", member.key())
                .contentType(ContentType.JSON)
                .body(Map.of("query", """
                        mutation CompleteMultipartUploadArtifact($completeMultipartAction: CompleteMultipartAction!,
                            $completedParts: [UploadPartsInput!]!, $artifactID: ID!, $storagePath: String!,
                            $uploadID: String!) {
                          completeMultipartUploadArtifact(input: {completeMultipartAction: $completeMultipartAction,
                              completedParts: $completedParts, artifactID: $artifactID, storagePath: $storagePath,
                              uploadID: $uploadID}) { digest }
                        }""", "variables",
                        Map.of("completeMultipartAction", "Complete", "completedParts", parts, "artifactID", draft,
                                "storagePath", node.getString("storagePath"), "uploadID",
                                node.getString("uploadMultipartUrls.uploadID"))))
                .post("/graphql");
    }

    private long count(String sql, Object parameter) {
        return QuarkusTransaction.requiringNew().call(
                () -> ((Number) em.createNativeQuery(sql).setParameter(1, parameter).getSingleResult()).longValue());
    }

    // the worker protocol: a checkpoint's file

    private static RequestSpecification training(String token) {
        return given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(token);
    }

    @Test
    void aWorkersCheckpointFileIsRefusedAndTheJobKeepsNoFileOfIt() throws Exception {
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(ADMIN)
                .body(Map.of("id", "example/full-disk-base", "backend", "openai-compatible", "base_url",
                        "http://127.0.0.1:9/v1", "upstream_model", "base-model"))
                .post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)));
        String model = training(member.key())
                .body(Map.of("entity", team.name, "project", "disk", "name", "agent", "base_model",
                        "example/full-disk-base", "return_existing", true))
                .post("/v1/preview/models").then().statusCode(anyOf(equalTo(200), equalTo(201))).extract().path("id");
        Map<String, Object> choice = Map.of("finish_reason", "stop", "index", 0, "logprobs",
                Map.of("content", List.of()), "message", Map.of("role", "assistant", "content", "z"));
        Map<String, Object> trajectory = Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "say z"), choice), "tools", List.of(), "reward", 1, "metrics",
                Map.of(), "metadata", Map.of(), "logs", List.of());
        String job = training(member.key())
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory, trajectory)))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        String worker = training(ADMIN)
                .body(Map.of("name", "disk-worker", "base_models", List.of("example/full-disk-base")))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        String token = training(ADMIN).post("/api/v1/workers/" + worker + "/claim?wait=5").then().statusCode(200)
                .body("job_id", equalTo(job)).extract().path("token");
        byte[] bytes = content(400 * 1024);
        fill(blobDir());

        given().filter(Contract.TRAINING).auth().oauth2(token).contentType("application/octet-stream")
                .queryParam("path", "adapter_model.safetensors").body(bytes)
                .put("/api/v1/workers/jobs/" + job + "/checkpoint").then().statusCode(507)
                .contentType("application/problem+json").body("status", equalTo(507))
                .body("detail", containsString("storage is full"));

        // the attempt has no file: it cannot finish on nothing, and stays the worker's to retry
        training(token).post("/api/v1/workers/jobs/" + job + "/finish").then().statusCode(422).body("detail",
                containsString("Upload the checkpoint's files"));
        nothingStored(bytes);

        free();
        given().filter(Contract.TRAINING).auth().oauth2(token).contentType("application/octet-stream")
                .queryParam("path", "adapter_model.safetensors").body(bytes)
                .put("/api/v1/workers/jobs/" + job + "/checkpoint").then().statusCode(200)
                .body("digest", equalTo(sha256(bytes)));
        training(token).post("/api/v1/workers/jobs/" + job + "/finish").then().statusCode(200);
        training(member.key()).get("/v1/preview/training-jobs/" + job).then().statusCode(200).body("status",
                equalTo("succeeded"));
        assertFalse(blobs.size(sha256(bytes)).isEmpty());
    }

    // models by name: a pull whose file cannot fit, and one that finds the disk full on the way

    private static JsonPath pullState(String id, String state) throws InterruptedException {
        long until = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
        JsonPath model;
        do {
            model = given().filter(Contract.INFERENCE).auth().oauth2(ADMIN).urlEncodingEnabled(false)
                    .get("/api/v1/admin/models/" + id).then().statusCode(200).extract().jsonPath();
            if (state.equals(model.getString("pull.state"))) {
                return model;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < until);
        throw new AssertionError("The pull of " + id + " is not " + state + ": " + model.prettify());
    }

    private static Response addPulled(String id, String name) {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(ADMIN)
                .body(Map.of("id", id, "backend", "gguf", "pull", name)).post("/api/v1/admin/models");
    }

    private static List<String> files(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(file -> file.getFileName().toString()).toList();
        }
    }

    @Test
    void aPullThatCannotFitIsA507AndOneThatFillsTheDiskFailsInWordsLeavingNoPartialFile() throws Exception {
        Path models = Path.of(ConfigProvider.getConfig().getValue("fulcrum.inference.hub.model-dir", String.class));
        SmallDisks.mountTmpfs(models, "1m");
        FakeHub hub = new FakeHub(ConfigProvider.getConfig().getValue(FakeHubPort.PORT_PROPERTY, Integer.class));
        try {
            // 2 MiB for a disk of 1 MiB: refused before anything is written, and no model is added
            hub.repo("fulcrum-test/big-GGUF", "open", Map.of("big-Q4_K_M.gguf", FakeHub.random(2 << 20, 70)));
            String big = Fixtures.unique("big");
            addPulled(big, "hf.co/fulcrum-test/big-GGUF").then().statusCode(507).contentType("application/problem+json")
                    .body("detail", allOf(containsString("storage is full"), containsString("model-dir")));
            given().filter(Contract.INFERENCE).auth().oauth2(ADMIN).get("/api/v1/admin/models/" + big).then()
                    .statusCode(404);

            // 600 KiB fit when the pull begins; the disk fills under it: failed in words, the partial file removed
            FakeHub.Blob fits = FakeHub.random(600 * 1024, 71);
            hub.repo("fulcrum-test/fits-GGUF", "open", Map.of("fits-Q4_K_M.gguf", fits));
            FakeHub.Hold hold = hub.holdAt(fits.sha256(), 100 * 1024);
            String id = Fixtures.unique("fits");
            addPulled(id, "hf.co/fulcrum-test/fits-GGUF").then().statusCode(202);
            assertTrue(hold.awaitReached());
            fill(models);
            hold.release(false);
            String error = pullState(id, "failed").getString("pull.error");
            assertTrue(error.startsWith("The disk is full: no space left in " + models.resolve("partial")), error);
            assertEquals(List.of(), files(models.resolve("partial")).stream().filter(f -> f.endsWith(".part")).toList(),
                    "no partial file left");
            assertEquals(List.of(), files(models.resolve("blobs")));

            // nothing else broke: the server answers, and the model is deleted as any other
            Inference.asAdmin().body(Inference.chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(503)
                    .body("error.code", equalTo("model_pull_failed"));
            given().filter(Contract.INFERENCE).auth().oauth2(ADMIN).delete("/api/v1/admin/models/" + id).then()
                    .statusCode(204);
        } finally {
            free();
            hub.close();
            SmallDisks.unmount(models);
        }
    }

    // the administration API: a backup, spooled under the data directory before it is sent

    @Test
    void aBackupWithoutRoomForItsSpoolIsA507AndLeavesNothing() throws Exception {
        Path spool = Path.of(ConfigProvider.getConfig().getValue("fulcrum.data-dir", String.class))
                .resolve("backups-spool");
        SmallDisks.mountTmpfs(spool, "1m");
        try {
            fill(spool);
            given().filter(Contract.ACCOUNTS).auth().oauth2(ADMIN).get("/api/v1/admin/backup").then().statusCode(507)
                    .contentType("application/problem+json").body("detail", containsString("storage is full"));
            try (Stream<Path> files = Files.list(spool)) {
                assertEquals(List.of("ballast"), files.map(file -> file.getFileName().toString()).toList(),
                        "no spooled table left");
            }
        } finally {
            free();
            SmallDisks.unmount(spool);
        }
        byte[] archive = given().filter(Contract.ACCOUNTS).auth().oauth2(ADMIN).get("/api/v1/admin/backup").then()
                .statusCode(200).extract().asByteArray();
        assertTrue(archive.length > 0);
    }
}

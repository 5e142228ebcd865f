package dev.fulcrum.wandb;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.path.json.config.JsonPathConfig;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;

/**
 * The official {@code wandb} SDK from PyPI (pinned in {@code src/test/python/requirements.txt}, installed by
 * {@link PythonClients}), unchanged, pointed at this server: {@code src/test/python/wandb_sdk/runs_e2e.py}. What it
 * logged is then read through the runs API, and a project automation on the metric it logged delivers.
 */
@QuarkusTest
class WandbSdkTest {

    static final String SCRIPT = "wandb_sdk/runs_e2e.py";
    static final String ARTIFACTS = "wandb_sdk/artifacts_e2e.py";
    static final String RUN_FILES = "wandb_sdk/runfiles_e2e.py";

    static WebhookReceiver receiver;

    @Inject
    Fixtures fixtures;

    @Inject
    EntityManager em;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void receiver() throws IOException {
        receiver = new WebhookReceiver(Answer.empty(204));
    }

    @AfterAll
    static void stop() {
        receiver.close();
    }

    static RequestSpecification as(Account account, io.restassured.filter.Filter contract) {
        return given().filter(contract).auth().oauth2(account.key()).contentType(ContentType.JSON);
    }

    private Map<String, String> env(Account account, String entity, String project, String mode) {
        Map<String, String> env = sdkEnv(base, account, entity, project);
        env.put("MODE", mode);
        return env;
    }

    /**
     * The environment of an SDK script run as {@code account} against this server ({@code base}): its URL and key, its
     * files under {@code target/py-clients}, and the {@code ENTITY} and {@code PROJECT} it logs to; more may be put.
     */
    static Map<String, String> sdkEnv(URI base, Account account, String entity, String project) {
        String url = base.toString();
        Map<String, String> env = new HashMap<>();
        env.put("WANDB_BASE_URL", url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        env.put("WANDB_API_KEY", account.key());
        env.put("WANDB_DIR", java.nio.file.Path.of("target", "py-clients").toAbsolutePath().toString());
        env.put("WANDB_CACHE_DIR", java.nio.file.Path.of("target", "py-clients", "cache").toAbsolutePath().toString());
        env.put("ENTITY", entity);
        env.put("PROJECT", project);
        return env;
    }

    static Map<String, Object> metrics(int step) {
        return Map.of("loss", 1.0 / (step + 1), "acc", step / 1000.0, "lr", 0.001 * (1 + step % 10));
    }

    @Test
    void runsLoggedAndResumedByTheSdkAreTheRunsOfTheRunsApi() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        String project = "sdk-runs";
        as(admin, Contract.ACCOUNTS).body(Map.of("name", project)).post("/api/v1/entities/" + team.name + "/projects")
                .then().statusCode(201);
        long hook = as(admin, Contract.AUTOMATIONS)
                .body(Map.of("name", "sdk-hook", "url", receiver.url("/metric-hook")))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                .getLong("id");
        Map<String, Object> automation = new HashMap<>();
        automation.put("name", "acc-high");
        automation.put("event", "RUN_METRIC_THRESHOLD");
        automation.put("team", team.name);
        automation.put("action_type", "Webhooks");
        automation.put("webhook_id", hook);
        automation.put("metric_threshold",
                Map.of("metric", "acc", "aggregation", "MAX", "window", 1, "comparison", ">", "threshold", 0.5));
        automation.put("payload",
                "{\"run\": \"${run_name}\", \"display\": \"${run_display_name}\", \"metric\": \"${metric_name}\","
                        + " \"value\": \"${metric_value}\"}");
        as(admin, Contract.AUTOMATIONS).body(automation)
                .post("/api/v1/entities/" + team.name + "/projects/" + project + "/automations").then().statusCode(201);

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5), env(admin, team.name, project, "runs"));
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        String runId = JsonPath.from(result.group(1)).getString("run_id");

        String run = "/api/v1/entities/" + team.name + "/projects/" + project + "/runs/" + runId;
        as(admin, Contract.RUNS).get(run).then().statusCode(200).body("state", equalTo("finished"))
                .body("history_rows", equalTo(1100)).body("last_step", equalTo(1099)).body("config.lr", equalTo(0.001f))
                .body("config.layers", equalTo(4)).body("config.optimizer", equalTo("adam"))
                .body("created_by", equalTo(admin.name()));
        JsonPath summary = as(admin, Contract.RUNS).get(run + "/summary").then().statusCode(200).extract().jsonPath()
                .using(new JsonPathConfig(JsonPathConfig.NumberReturnType.DOUBLE));
        assertEquals(0.999, summary.getDouble("best_acc"), 1e-12);
        assertEquals(1.099, summary.getDouble("acc"), 1e-12);
        assertEquals(1099, summary.getInt("_step"));
        List<Map<String, Object>> rows = as(admin, Contract.RUNS).queryParam("keys", "loss,acc,lr")
                .queryParam("limit", 2000).get(run + "/history").then().statusCode(200).extract().jsonPath()
                .using(new JsonPathConfig(JsonPathConfig.NumberReturnType.DOUBLE)).getList("rows");
        assertEquals(1100, rows.size());
        for (int step = 0; step < 1100; step++) {
            Map<String, Object> row = rows.get(step);
            assertEquals(step, ((Number) row.get("_step")).intValue());
            for (Map.Entry<String, Object> logged : metrics(step).entrySet()) {
                assertEquals((Double) logged.getValue(), ((Number) row.get(logged.getKey())).doubleValue(), 1e-12,
                        "step " + step + ", " + logged.getKey());
            }
        }

        // acc first passed 0.5 at step 501: the project's automation delivered, once for the run
        String delivered = receiver.awaitAt("/metric-hook").text();
        JsonPath payload = JsonPath.from(delivered);
        assertEquals(runId, payload.getString("run"));
        String display = as(admin, Contract.RUNS).get(run).then().extract().path("display_name");
        assertEquals(display == null || display.isEmpty() ? runId : display, payload.getString("display"), delivered);
        assertEquals("acc", payload.getString("metric"));
        assertTrue(Double.parseDouble(payload.getString("value")) > 0.5, delivered);
    }

    @Test
    void artifactsLoggedByTheSdkAreTheVersionsOfTheArtifactsApi() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        String project = "sdk-artifacts";
        as(admin, Contract.ACCOUNTS).body(Map.of("name", project)).post("/api/v1/entities/" + team.name + "/projects")
                .then().statusCode(201);
        long hook = as(admin, Contract.AUTOMATIONS)
                .body(Map.of("name", "alias-hook", "url", receiver.url("/alias-hook")))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                .getLong("id");
        Map<String, Object> automation = new HashMap<>();
        automation.put("name", "on-production");
        automation.put("event", "ADD_ARTIFACT_ALIAS");
        automation.put("alias_regex", "^production$");
        automation.put("team", team.name);
        automation.put("action_type", "Webhooks");
        automation.put("webhook_id", hook);
        automation.put("payload", "{\"alias\": \"${alias}\", \"version\": \"${artifact_version_string}\"}");
        as(admin, Contract.AUTOMATIONS).body(automation)
                .post("/api/v1/entities/" + team.name + "/projects/" + project + "/automations").then().statusCode(201);

        String output = PythonClients.run(ARTIFACTS, Duration.ofMinutes(8),
                env(admin, team.name, project, "artifacts"));
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath logged = JsonPath.from(result.group(1));
        assertEquals("v0", logged.getString("version"));

        // the version the SDK logged is the version of the artifacts API, with its files, aliases, tags and metadata
        String versions = "/api/v1/entities/" + team.name + "/projects/" + project
                + "/artifacts/collections/sdk-data/versions";
        as(admin, Contract.ARTIFACTS).get(versions + "/production").then().statusCode(200)
                .body("version", equalTo("v0")).body("type", equalTo("dataset"))
                .body("aliases", containsInAnyOrder("latest", "production", "staging"))
                .body("tags", equalTo(List.of("reviewed"))).body("metadata.rows", equalTo(3))
                .body("metadata.provenance", equalTo("sdk")).body("description", equalTo("three files"))
                .body("files.path", containsInAnyOrder("conf/params.json", "notes.txt", "weights.bin"))
                .body("files.find { it.path == 'weights.bin' }.size", equalTo(50 << 20))
                .body("files.find { it.path == 'weights.bin' }.digest", equalTo(logged.getString("weights_sha256")));
        given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/entities/" + team.name + "/projects/" + project + "/events").then().statusCode(200)
                .body("events.type", hasItems("CREATE_ARTIFACT", "ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_TAG"));

        // the alias the SDK gave fired the project's automation
        String delivered = receiver.awaitAt("/alias-hook").text();
        JsonPath payload = JsonPath.from(delivered);
        assertEquals("production", payload.getString("alias"));
        assertEquals(team.name + "/" + project + "/sdk-data:production", payload.getString("version"));
    }

    /**
     * A run's files and media ({@code runfiles_e2e.py}): saved, logged and the SDK's own files come back through
     * {@code run.files()} and {@code file.download()} byte for byte, and {@code run.history()} gives the media rows;
     * the same files and media through the runs API.
     */
    @Test
    void runFilesAndMediaLoggedByTheSdkComeBackThroughTheSdkAndTheRunsApi() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        String project = "sdk-files";
        String output = PythonClients.run(RUN_FILES, Duration.ofMinutes(5), env(admin, team.name, project, "files"));
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath logged = JsonPath.from(result.group(1));

        String run = "/api/v1/entities/" + team.name + "/projects/" + project + "/runs/" + logged.getString("run_id");
        as(admin, Contract.RUNS).get(run + "/files").then().statusCode(200)
                .body("files.name", hasItems(logged.getList("files").toArray()))
                .body("files.name", hasItems("notes/extra.txt"))
                .body("total", equalTo(logged.getList("files").size() + 1))
                .body("files.find { it.name == 'weights.bin' }.size", equalTo(300_000));
        byte[] tail = as(admin, Contract.RUNS).header("Range", "bytes=-10").queryParam("name", "weights.bin")
                .get(run + "/file").then().statusCode(206).header("Content-Range", "bytes 299990-299999/300000")
                .extract().asByteArray();
        assertEquals(10, tail.length);
        as(admin, Contract.RUNS).queryParam("name", "output.log").get(run + "/file").then().statusCode(200)
                .body(org.hamcrest.Matchers.containsString("hello from the run"));
        as(admin, Contract.RUNS).get(run + "/media").then().statusCode(200).body("rows.step", equalTo(List.of(0, 1, 2)))
                .body("rows[0].values.img._type", equalTo("image-file"))
                .body("rows[0].values.h._type", equalTo("histogram"));
    }

    /**
     * A version the SDK did not log (written by the REST API) downloads through the SDK: the manifest it reads gives
     * each file's MD5, kept when the blob was stored, or computed and kept on first read for a blob stored before MD5s
     * were kept (its row is removed here to stand for one).
     */
    @Test
    void aVersionWrittenThroughTheRestApiDownloadsThroughTheSdk() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        String project = "sdk-rest-download";
        as(admin, Contract.ACCOUNTS).body(Map.of("name", project)).post("/api/v1/entities/" + team.name + "/projects")
                .then().statusCode(201);
        byte[] weights = new byte[3 << 20];
        new java.util.Random(25).nextBytes(weights);
        byte[] config = "{\"r\": 8}".getBytes(StandardCharsets.UTF_8);
        JsonPath created = given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                .contentType("multipart/form-data")
                .multiPart("file", "adapter_model.safetensors", weights, "application/octet-stream")
                .multiPart("file", "nested/adapter_config.json", config, "application/json").multiPart("type", "lora")
                .post("/api/v1/entities/" + team.name + "/projects/" + project
                        + "/artifacts/collections/rest-model/versions")
                .then().statusCode(201).extract().jsonPath();
        String weightsDigest = created.getString("files.find { it.path == 'adapter_model.safetensors' }.digest");
        String configDigest = created.getString("files.find { it.path == 'nested/adapter_config.json' }.digest");
        // MD5s are kept at upload; one blob without its row stands for a blob stored before they were
        QuarkusTransaction.requiringNew().run(() -> {
            assertEquals(2L,
                    ((Number) em.createNativeQuery("select count(*) from blob_md5s where digest in (?1, ?2)")
                            .setParameter(1, weightsDigest).setParameter(2, configDigest).getSingleResult())
                                    .longValue());
            em.createNativeQuery("delete from blob_md5s where digest = ?1").setParameter(1, configDigest)
                    .executeUpdate();
        });

        Map<String, String> env = new HashMap<>(env(admin, team.name, project, "download"));
        env.put("ARTIFACT", "rest-model:v0");
        env.put("TYPE", "lora");
        String output = PythonClients.run(ARTIFACTS, Duration.ofMinutes(3), env);
        Matcher result = Pattern.compile("DOWNLOADED (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath downloaded = JsonPath.from(result.group(1));
        assertEquals(Map.of("adapter_model.safetensors", weightsDigest, "nested/adapter_config.json", configDigest),
                downloaded.getMap(""), output);
        QuarkusTransaction.requiringNew()
                .run(() -> assertEquals(java.util.Base64.getEncoder().encodeToString(md5(config)),
                        em.createNativeQuery("select md5 from blob_md5s where digest = ?1")
                                .setParameter(1, configDigest).getSingleResult()));
    }

    private static byte[] md5(byte[] content) {
        try {
            return java.security.MessageDigest.getInstance("MD5").digest(content);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The SDK creates the run first, so a viewer's artifact script is refused at its wandb.init, before any upload. */
    @Test
    void aViewersArtifactScriptFailsWithTheSdksOwnError() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Account viewer = fixtures.user("sdk-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        as(admin, Contract.ACCOUNTS).body(Map.of("name", "read-only-artifacts"))
                .post("/api/v1/entities/" + team.name + "/projects").then().statusCode(201);

        String output = PythonClients.run(ARTIFACTS, Duration.ofMinutes(3),
                env(viewer, team.name, "read-only-artifacts", "viewer"));
        assertTrue(output.contains("REFUSED wandb.errors.errors.CommError: This needs the member role on " + team.name),
                output);
    }

    @Test
    void aViewersInitFailsWithTheSdksOwnError() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Account viewer = fixtures.user("sdk-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        as(admin, Contract.ACCOUNTS).body(Map.of("name", "read-only"))
                .post("/api/v1/entities/" + team.name + "/projects").then().statusCode(201);

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(3), env(viewer, team.name, "read-only", "viewer"));
        assertTrue(output.contains("REFUSED wandb.errors.errors.CommError: This needs the member role on " + team.name),
                output);
        as(admin, Contract.RUNS).get("/api/v1/entities/" + team.name + "/projects/read-only/runs").then()
                .statusCode(200).body("runs", equalTo(List.of()));
    }
}

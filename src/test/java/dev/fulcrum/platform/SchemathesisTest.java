package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.PythonClients;

/**
 * Schemathesis (pinned in {@code src/test/python/schemathesis/requirements.txt}) runs every contract of
 * {@code openapi/} and the GraphQL schema against the server, as its administrator, in a small world whose names the
 * path parameters carry, so that requests reach the operations' validation instead of a 404. A fixed seed and a small
 * number of examples per operation bound its time (docs/contributing.md, "Contract fuzzing"). The test fails with
 * Schemathesis's report of every contract where it found a server error, an undocumented status, content type or
 * header, or a body off its schema.
 */
@QuarkusTest
class SchemathesisTest {

    /** The documents, each run on its own. */
    static final List<String> CONTRACTS = List.of("accounts", "artifacts", "automations", "datasets", "events",
            "inference", "runs", "training", "wandb");
    static final String CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,"
            + "response_schema_conformance,response_headers_conformance";
    static final int MAX_EXAMPLES = 5;
    static final long SEED = 43;
    /** What a DELETE names instead of the world, so that no deletion takes away what later requests name. */
    static final String ABSENT = "schemathesis-absent";
    private static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;
    private static final Path HOME = Path.of("target", "schemathesis");

    @TestHTTPResource("/")
    URI base;

    @Test
    void everyContractPassesSchemathesis() throws Exception {
        Path python = PythonClients.python("schemathesis/requirements.txt");
        Map<String, String> world = makeWorld();
        Files.createDirectories(HOME);
        Path config = HOME.resolve("schemathesis.toml").toAbsolutePath();
        Files.writeString(config, config(world));
        String origin = base.toString().replaceAll("/$", "");
        List<String> failed = new ArrayList<>();
        StringBuilder report = new StringBuilder();
        long started = System.nanoTime();
        for (String contract : CONTRACTS) {
            long t = System.nanoTime();
            String output = run(python, config, CHECKS, origin + "/openapi/" + contract + ".yaml");
            report.append(String.format("%s: %.1f s%n", contract, (System.nanoTime() - t) / 1e9));
            if (output != null) {
                failed.add(contract + ":\n" + output);
            }
        }
        long t = System.nanoTime();
        // the W&B protocol's GraphQL: the schema file, since the server answers no introspection
        String output = run(python, config, "graphql_no_server_failure", "--url", origin + "/graphql",
                Path.of("openapi", "wandb.graphql").toAbsolutePath().toString());
        report.append(String.format("graphql: %.1f s%n", (System.nanoTime() - t) / 1e9));
        if (output != null) {
            failed.add("graphql:\n" + output);
        }
        report.append(String.format("Schemathesis in all: %.1f s%n", (System.nanoTime() - started) / 1e9));
        System.out.println(report);
        Files.writeString(HOME.resolve("times.txt"), report);
        assertEquals(List.of(), failed);
    }

    /** Runs Schemathesis; answers its output when it failed, else null. */
    private static String run(Path python, Path config, String checks, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(python.toString(), "-m", "schemathesis.cli", "--config-file",
                config.toString(), "run", "--header", "Authorization: Bearer " + ADMIN, "--checks", checks,
                "--max-examples", String.valueOf(MAX_EXAMPLES), "--seed", String.valueOf(SEED), "--workers", "1",
                "--generation-database", "none", "--no-color"));
        command.addAll(List.of(args));
        File log = Files.createTempFile("schemathesis", ".log").toFile();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
        boolean ended = process.waitFor(5, TimeUnit.MINUTES);
        if (!ended) {
            process.destroyForcibly().waitFor();
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        Files.delete(log.toPath());
        if (!ended) {
            return "did not end in 5 minutes:\n" + output;
        }
        return process.exitValue() == 0 ? null : output;
    }

    /**
     * The configuration: the world's names for the path parameters; a DELETE gets names of nothing (it answers 404,
     * which every deletion documents) so that it takes nothing away from the operations run after it.
     */
    private static String config(Map<String, String> world) {
        StringBuilder toml = new StringBuilder("hooks = \"")
                .append(Path.of("src", "test", "python", "schemathesis", "hooks.py").toAbsolutePath())
                .append("\"\n\n# no state kept between runs (.schemathesis/ in the working directory): each run is the seed's alone\n[cache]\nenabled = false\n\n[parameters]\n");
        // a worker's claim waits up to `wait` seconds for work: longer than a request may take here
        toml.append("\"query.wait\" = 0\n");
        world.forEach(
                (name, value) -> toml.append("\"path.").append(name).append("\" = \"").append(value).append("\"\n"));
        // the system check answers 503 while a queue has no worker (the test's GPU queue has none): its documented
        // "not ready", checked by status_code_conformance and response_schema_conformance, not a failure
        toml.append("\n[[operations]]\ninclude-path = \"/v1/system-check\"\n").append(
                "[operations.checks.not_a_server_error]\nexpected-statuses = [\"2XX\", \"3XX\", \"4XX\", 503]\n");
        toml.append("\n[[operations]]\ninclude-method = \"DELETE\"\n[operations.parameters]\n");
        world.forEach((name, value) -> toml.append("\"path.").append(name).append("\" = \"")
                .append(value.matches("\\d+") ? "999999999" : ABSENT).append("\"\n"));
        return toml.toString();
    }

    /** One of everything a path can name, made as the server administrator; answers the path parameters' values. */
    private static Map<String, String> makeWorld() {
        String team = "st-team";
        String member = "st-member";
        String project = "st-project";
        String registry = "st-registry";
        String collection = "st-collection";

        admin(Contract.ACCOUNTS).body(Map.of("username", member)).post("/api/v1/users").then().statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("name", team)).post("/api/v1/teams").then().statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("role", "member")).put("/api/v1/teams/" + team + "/members/" + member)
                .then().statusCode(200);
        admin(Contract.ACCOUNTS).body(Map.of("name", project)).post("/api/v1/entities/" + team + "/projects").then()
                .statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("name", registry)).post("/api/v1/registries").then().statusCode(201);
        String keyId = admin(Contract.ACCOUNTS).body(Map.of("name", "st-throwaway")).post("/api/v1/users/me/api-keys")
                .then().statusCode(201).extract().jsonPath().getString("id");

        String projectPath = "/api/v1/entities/" + team + "/projects/" + project;
        String collectionPath = projectPath + "/artifacts/collections/" + collection;
        admin(Contract.ARTIFACTS).body(Map.of("name", collection, "type", "model"))
                .post(projectPath + "/artifacts/collections").then().statusCode(201);
        String version = given().filter(Contract.ARTIFACTS).auth().oauth2(ADMIN).contentType("multipart/form-data")
                .multiPart("file", "model.txt", "weights".getBytes(StandardCharsets.UTF_8), "text/plain")
                .multiPart("type", "model").post(collectionPath + "/versions").then().statusCode(201).extract()
                .jsonPath().getString("version");
        admin(Contract.ARTIFACTS).put(collectionPath + "/versions/" + version + "/aliases/st-alias").then()
                .statusCode(200);
        admin(Contract.ARTIFACTS).put(collectionPath + "/versions/" + version + "/tags/st-tag").then().statusCode(200);

        admin(Contract.AUTOMATIONS).body(Map.of("name", "ST_SECRET", "value", "s3cret"))
                .post("/api/v1/teams/" + team + "/secrets").then().statusCode(201);
        long webhook = admin(Contract.AUTOMATIONS).body(Map.of("name", "st-hook", "url", "http://127.0.0.1:9/hook"))
                .post("/api/v1/teams/" + team + "/webhooks").then().statusCode(201).extract().jsonPath().getLong("id");
        long automation = admin(Contract.AUTOMATIONS)
                .body(Map.of("name", "st-automation", "event", "ADD_ARTIFACT_TAG", "team", team, "webhook_id", webhook))
                .post(projectPath + "/automations").then().statusCode(201).extract().jsonPath().getLong("id");

        admin(Contract.RUNS).body(Map.of("name", "st-run")).post(projectPath + "/runs").then().statusCode(201);

        Response dataset = admin(Contract.DATASETS).body(Map.of("name", "st", "rows", List.of(Map.of("q", "a"))))
                .post("/v2/" + team + "/" + project + "/datasets");
        dataset.then().statusCode(200);
        String objectId = dataset.jsonPath().getString("object_id");
        String digest = dataset.jsonPath().getString("digest");
        String rows = admin(Contract.DATASETS)
                .get("/v2/" + team + "/" + project + "/datasets/" + objectId + "/versions/" + digest).then()
                .statusCode(200).extract().jsonPath().getString("rows");

        admin(Contract.INFERENCE).body(Map.of("id", "st-model", "backend", "openai-compatible", "base_url",
                "http://127.0.0.1:9/v1", "upstream_model", "upstream")).post("/api/v1/admin/models").then()
                .statusCode(201);
        // a training model on a base model only external workers serve: its jobs wait in the queue, nothing trains
        admin(Contract.INFERENCE)
                .body(Map.of("id", "example/gpu-base", "backend", "openai-compatible", "base_url",
                        "http://127.0.0.1:9/v1", "upstream_model", "base-model"))
                .post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)));
        String trainingModel = admin(Contract.TRAINING)
                .body(Map.of("entity", team, "project", project, "name", "st-agent", "base_model", "example/gpu-base"))
                .post("/v1/preview/models").then().statusCode(201).extract().jsonPath().getString("id");
        String job = admin(Contract.TRAINING)
                .body(Map.of("model_id", trainingModel, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory(1), trajectory(0))))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().jsonPath().getString("id");
        String worker = admin(Contract.TRAINING)
                .body(Map.of("name", "st-worker", "base_models", List.of("example/uncatalogued-base")))
                .post("/api/v1/workers").then().statusCode(201).extract().jsonPath().getString("id");

        Map<String, String> world = new LinkedHashMap<>();
        world.put("entity", team);
        world.put("team", team);
        world.put("project", project);
        world.put("username", member);
        world.put("id", keyId);
        world.put("registry", registry);
        world.put("collection", collection);
        world.put("version", version);
        world.put("alias", "st-alias");
        world.put("tag", "st-tag");
        world.put("secret", "ST_SECRET");
        world.put("webhookId", String.valueOf(webhook));
        world.put("automation", String.valueOf(automation));
        world.put("run", "st-run");
        world.put("object_id", objectId);
        world.put("digest", digest);
        world.put("table_digest", rows.substring(rows.lastIndexOf('/') + 1));
        world.put("model", "st-model");
        world.put("model_id", trainingModel);
        world.put("training_job_id", job);
        world.put("worker_id", worker);
        return world;
    }

    private static Map<String, Object> trajectory(int reward) {
        return Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "say hi"),
                        Map.of("finish_reason", "stop", "index", 0, "logprobs", Map.of("content", List.of()), "message",
                                Map.of("role", "assistant", "content", "hi"))),
                "tools", List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    private static RequestSpecification admin(io.restassured.filter.Filter contract) {
        return given().filter(contract).auth().oauth2(ADMIN).contentType(ContentType.JSON);
    }
}

package dev.fulcrum.support;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.restassured.filter.Filter;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

/**
 * One of everything a path of the contracts can name, made through the API as the server administrator, for the tests
 * that send every operation requests (the hostile-input test, the Schemathesis run): a team with a member, a project, a
 * registry the member belongs to, an API key that may be revoked, an artifact version with an alias and a tag linked
 * into the registry, a secret, a webhook, a Slack integration, project and registry automations, a run, a dataset and
 * its table, a catalog model, a training model with a queued job, and a worker. The names begin with {@code prefix} and
 * are unique.
 */
public final class SeededWorld {

    /** The base model of the world's training model: only external workers serve it, so its jobs stay queued. */
    public static final String BASE_MODEL = "example/gpu-base";
    public static final String WEBHOOK_URL = "http://127.0.0.1:9/hook";
    public static final String MODEL_URL = "http://127.0.0.1:9/v1";

    private static int sequence;

    private SeededWorld() {
    }

    /**
     * Makes the world; answers its names by the path parameter that takes each (and {@code registry automation}, the id
     * of the registry's automation).
     */
    public static Map<String, String> make(String prefix) {
        String team = unique(prefix + "team");
        String member = unique(prefix + "member");
        String project = prefix + "project";
        String registry = unique(prefix + "registry");
        String collection = prefix + "collection";
        String alias = prefix + "-alias";
        String tag = prefix + "-tag";
        String secret = prefix.toUpperCase(java.util.Locale.ROOT) + "_SECRET";

        admin(Contract.ACCOUNTS).body(Map.of("username", member)).post("/api/v1/users").then().statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("name", team)).post("/api/v1/teams").then().statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("role", "member")).put("/api/v1/teams/" + team + "/members/" + member)
                .then().statusCode(200);
        admin(Contract.ACCOUNTS).body(Map.of("name", project)).post("/api/v1/entities/" + team + "/projects").then()
                .statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("name", registry)).post("/api/v1/registries").then().statusCode(201);
        admin(Contract.ACCOUNTS).body(Map.of("role", "member"))
                .put("/api/v1/registries/" + registry + "/members/" + member).then().statusCode(200);
        // a key of the administrator's own that may be revoked: never the bootstrap key
        String keyId = admin(Contract.ACCOUNTS).body(Map.of("name", prefix + "-throwaway"))
                .post("/api/v1/users/me/api-keys").then().statusCode(201).extract().jsonPath().getString("id");

        String projectPath = "/api/v1/entities/" + team + "/projects/" + project;
        String collectionPath = projectPath + "/artifacts/collections/" + collection;
        admin(Contract.ARTIFACTS).body(Map.of("name", collection, "type", "model"))
                .post(projectPath + "/artifacts/collections").then().statusCode(201);
        String version = given().filter(Contract.ARTIFACTS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .contentType("multipart/form-data")
                .multiPart("file", "model.txt", "weights".getBytes(StandardCharsets.UTF_8), "text/plain")
                .multiPart("type", "model").post(collectionPath + "/versions").then().statusCode(201).extract()
                .jsonPath().getString("version");
        admin(Contract.ARTIFACTS).put(collectionPath + "/versions/" + version + "/aliases/" + alias).then()
                .statusCode(200);
        admin(Contract.ARTIFACTS).put(collectionPath + "/versions/" + version + "/tags/" + tag).then().statusCode(200);
        admin(Contract.ARTIFACTS).body(Map.of("registry", registry, "collection", collection))
                .post(collectionPath + "/versions/" + version + "/links").then().statusCode(201);

        admin(Contract.AUTOMATIONS).body(Map.of("name", secret, "value", "s3cret"))
                .post("/api/v1/teams/" + team + "/secrets").then().statusCode(201);
        long webhook = admin(Contract.AUTOMATIONS).body(Map.of("name", prefix + "-hook", "url", WEBHOOK_URL))
                .post("/api/v1/teams/" + team + "/webhooks").then().statusCode(201).extract().jsonPath().getLong("id");
        long slack = admin(Contract.AUTOMATIONS)
                .body(Map.of("name", prefix + "-slack", "channel", "alerts", "bot_token_secret", secret))
                .post("/api/v1/teams/" + team + "/slack-integrations").then().statusCode(201).extract().jsonPath()
                .getLong("id");
        Map<String, Object> automation = Map.of("name", prefix + "-automation", "event", "ADD_ARTIFACT_TAG", "team",
                team, "webhook_id", webhook);
        long projectAutomation = admin(Contract.AUTOMATIONS).body(automation).post(projectPath + "/automations").then()
                .statusCode(201).extract().jsonPath().getLong("id");
        long registryAutomation = admin(Contract.AUTOMATIONS).body(automation)
                .post("/api/v1/registries/" + registry + "/automations").then().statusCode(201).extract().jsonPath()
                .getLong("id");

        String run = prefix + "-run";
        admin(Contract.RUNS).body(Map.of("name", run)).post(projectPath + "/runs").then().statusCode(201);

        Response dataset = admin(Contract.DATASETS).body(Map.of("name", prefix, "rows", List.of(Map.of("q", "a"))))
                .post("/v2/" + team + "/" + project + "/datasets");
        dataset.then().statusCode(200);
        String objectId = dataset.jsonPath().getString("object_id");
        String digest = dataset.jsonPath().getString("digest");
        String rows = admin(Contract.DATASETS)
                .get("/v2/" + team + "/" + project + "/datasets/" + objectId + "/versions/" + digest).then()
                .statusCode(200).extract().jsonPath().getString("rows");

        String catalogModel = unique(prefix + "-model");
        admin(Contract.INFERENCE).body(Map.of("id", catalogModel, "backend", "openai-compatible", "base_url", MODEL_URL,
                "upstream_model", "upstream")).post("/api/v1/admin/models").then().statusCode(201);
        admin(Contract.INFERENCE)
                .body(Map.of("id", BASE_MODEL, "backend", "openai-compatible", "base_url", MODEL_URL, "upstream_model",
                        "base-model"))
                .post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)));
        String trainingModel = admin(Contract.TRAINING)
                .body(Map.of("entity", team, "project", project, "name", prefix + "-agent", "base_model", BASE_MODEL))
                .post("/v1/preview/models").then().statusCode(201).extract().jsonPath().getString("id");
        String job = admin(Contract.TRAINING)
                .body(Map.of("model_id", trainingModel, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory(1), trajectory(0))))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().jsonPath().getString("id");
        String worker = admin(Contract.TRAINING)
                .body(Map.of("name", prefix + "-worker", "base_models", List.of("example/uncatalogued-base")))
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
        world.put("alias", alias);
        world.put("tag", tag);
        world.put("secret", secret);
        world.put("webhookId", String.valueOf(webhook));
        world.put("integrationId", String.valueOf(slack));
        world.put("automation", String.valueOf(projectAutomation));
        world.put("registry automation", String.valueOf(registryAutomation));
        world.put("run", run);
        world.put("object_id", objectId);
        world.put("digest", digest);
        world.put("table_digest", rows.substring(rows.lastIndexOf('/') + 1));
        world.put("model", catalogModel);
        world.put("model_id", trainingModel);
        world.put("training_job_id", job);
        world.put("worker_id", worker);
        return world;
    }

    /** A trajectory of a training job's group: one user message and an answer, with this reward. */
    public static Map<String, Object> trajectory(int reward) {
        return Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "say hi"),
                        Map.of("finish_reason", "stop", "index", 0, "logprobs", Map.of("content", List.of()), "message",
                                Map.of("role", "assistant", "content", "hi"))),
                "tools", List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    private static RequestSpecification admin(Filter contract) {
        return given().filter(contract).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).contentType(ContentType.JSON);
    }

    private static synchronized String unique(String prefix) {
        return prefix + (++sequence) + Long.toString(System.nanoTime() % 100_000);
    }
}

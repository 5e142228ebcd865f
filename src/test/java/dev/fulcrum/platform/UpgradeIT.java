package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.restassured.filter.Filter;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.PackagedJar;
import dev.fulcrum.support.WebhookReceiver;

/**
 * A single node's upgrade, as its user does it: the data directory an earlier release wrote (its embedded PostgreSQL 18
 * cluster, blobs, master key and JWT keys; {@code src/test/resources/upgrade/data-dir.tar.xz}, made by
 * {@code scripts/upgrade-fixture.sh} from the commit named in {@code fixture.json}) started with today's packaged jar.
 * Flyway applies every migration since; then every kind of record the earlier release wrote is read back through the
 * API (each answer checked against the contracts) and compared with what the script recorded, a blob is downloaded byte
 * for byte, a trained checkpoint answers, the console signs in, and finally an automation fires with the secrets the
 * earlier release sealed and a catalog model reaches its upstream with the API key it sealed. The tests run in order on
 * the one server; only the last two change anything.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UpgradeIT {

    private static final Path FIXTURE = Path.of("src", "test", "resources", "upgrade");
    private static final Path MIGRATIONS = Path.of("src", "main", "resources", "db", "migration");
    private static final Duration READY_WITHIN = Duration.ofSeconds(90);
    /** A later start's bootstrap key is ignored: the fixture's administrator exists. */
    private static final String OTHER_BOOTSTRAP_KEY = "fk_upgrade-it-other-bootstrap-key-0123";
    private static final String TEAM = "lab";
    private static final String PROJECT_PATH = "/api/v1/entities/lab/projects/demo";
    private static final String WEIGHTS = PROJECT_PATH + "/artifacts/collections/weights";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    private PackagedRuns runs;
    private Process fulcrum;
    private JsonNode made;
    private String admin;

    @BeforeAll
    void startTodaysJarOnTheEarlierDataDirectory() throws Exception {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        made = json.readTree(FIXTURE.resolve("fixture.json").toFile());
        admin = made.get("admin_key").asText();
        runs = new PackagedRuns("upgrade-it");
        Process tar = new ProcessBuilder("tar", "-xJf", FIXTURE.resolve("data-dir.tar.xz").toAbsolutePath().toString(),
                "-C", runs.dataDir().toString()).redirectErrorStream(true)
                        .redirectOutput(runs.logs().resolve("tar.log").toFile()).start();
        assertTrue(tar.waitFor(60, TimeUnit.SECONDS), "tar unpacks the fixture in time");
        assertEquals(0, tar.exitValue(), () -> "tar: " + read(runs.logs().resolve("tar.log")));
        // started as the README runs it (scripts/run.sh, with the start-up archive when it fits this JDK), with the
        // configuration the fixture was written with: a loopback webhook over http, a worker-trained base model
        fulcrum = runs.start(List.of("scripts/run.sh"),
                Map.of("FULCRUM_JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString(), "JAVA_OPTS",
                        "-Xmx384m", "FULCRUM_BOOTSTRAP_API_KEY", OTHER_BOOTSTRAP_KEY, "FULCRUM_WEBHOOKS_ALLOW_HTTP",
                        "true", "FULCRUM_WEBHOOKS_ALLOWED_NETWORKS", "127.0.0.0/8",
                        "FULCRUM_TRAINING_WORKER_BASE_MODELS", "upgrade/worker-base"));
        runs.await200(fulcrum, "/q/health/ready", READY_WITHIN, http);
    }

    @AfterAll
    void stop() throws IOException {
        if (runs != null) {
            runs.close();
        }
    }

    @Test
    @Order(1)
    void appliesEveryMigrationSinceTheEarlierRelease() throws IOException {
        String before = made.get("schema_version").asText();
        String latest = latestMigration();
        assertNotEquals(before, latest, "the fixture is older than today's schema");
        given().baseUri(base()).get("/q/health/started").then().statusCode(200)
                .body("checks.find { it.name == 'Database migrated' }.data.schema_version", equalTo(latest));
        String log = runs.lastLog();
        assertTrue(log.contains("Current version of schema \"public\": " + before), log);
        assertTrue(log.contains("now at version v" + latest), log);
        as(Contract.ACCOUNTS, OTHER_BOOTSTRAP_KEY).get("/api/v1/users/me").then().statusCode(401);
    }

    @Test
    @Order(2)
    void usersKeysTeamsProjectsAndRegistries() {
        JsonNode users = made.get("users");
        as(Contract.ACCOUNTS, users.at("/ada/key").asText()).get("/api/v1/users/me").then().statusCode(200)
                .body("username", equalTo("ada")).body("email", equalTo("ada@example.com"))
                .body("admin", equalTo(false));
        as(Contract.ACCOUNTS, admin).get("/api/v1/users/bob").then().statusCode(200).body("email",
                equalTo("bob@example.com"));
        as(Contract.ACCOUNTS, made.at("/admin_keys/admin-ci/key").asText()).get("/api/v1/users/me").then()
                .statusCode(200).body("username", equalTo("admin")).body("admin", equalTo(true));
        as(Contract.ACCOUNTS, made.at("/admin_keys/revoked-ci/key").asText()).get("/api/v1/users/me").then()
                .statusCode(401);
        as(Contract.ACCOUNTS, admin).get("/api/v1/users/me/api-keys").then().statusCode(200)
                .body("find { it.name == 'admin-ci' }.revoked_at", equalTo(null))
                .body("find { it.name == 'revoked-ci' }.revoked_at", notNullValue());

        // bob is a viewer of the team: he reads its members, and may not add one
        as(Contract.ACCOUNTS, users.at("/bob/key").asText()).get("/api/v1/teams/" + TEAM + "/members").then()
                .statusCode(200).body("find { it.username == 'ada' }.role", equalTo("admin"))
                .body("find { it.username == 'bob' }.role", equalTo("viewer"));
        as(Contract.ACCOUNTS, users.at("/bob/key").asText()).body(Map.of("role", "member"))
                .put("/api/v1/teams/" + TEAM + "/members/bob").then().statusCode(403);
        as(Contract.ACCOUNTS, admin).get(PROJECT_PATH).then().statusCode(200).body("name",
                equalTo(made.get("project").asText()));
        String registry = made.at("/registry/name").asText();
        as(Contract.ACCOUNTS, admin).get("/api/v1/registries/" + registry + "/members/ada").then().statusCode(200)
                .body("role", equalTo("admin"));
    }

    @Test
    @Order(3)
    void secretsWebhookAutomationsOfEveryEventAndTheirDeliveries() {
        as(Contract.AUTOMATIONS, admin).get("/api/v1/teams/" + TEAM + "/secrets").then().statusCode(200).body("name",
                containsInAnyOrder("DEPLOY_TOKEN", "SIGNING", "TOKEN"));
        JsonNode webhook = made.get("webhook");
        as(Contract.AUTOMATIONS, admin).get(webhookPath()).then().statusCode(200)
                .body("name", equalTo(webhook.get("name").asText())).body("url", equalTo(webhook.get("url").asText()))
                .body("signing_secret", equalTo("SIGNING")).body("access_token_secret", equalTo("TOKEN"))
                .body("enabled", equalTo(true));

        List<String> fired = new ArrayList<>();
        for (String scope : List.of("project", "registry")) {
            String path = scope.equals("project") ? PROJECT_PATH + "/automations"
                    : "/api/v1/registries/" + made.at("/registry/name").asText() + "/automations";
            made.at("/automations/" + scope).fields().forEachRemaining(entry -> {
                long id = entry.getValue().get("id").asLong();
                as(Contract.AUTOMATIONS, admin).get(path + "/" + id).then().statusCode(200)
                        .body("event", equalTo(entry.getKey()))
                        .body("name", equalTo(entry.getValue().get("name").asText())).body("enabled", equalTo(true))
                        .body("webhook_id", equalTo(webhook.get("id").asInt()))
                        .body("last_delivery.state", equalTo("succeeded"));
                as(Contract.AUTOMATIONS, admin).get(path + "/" + id + "/deliveries").then().statusCode(200)
                        .body("deliveries.size()", greaterThan(0))
                        .body("deliveries.state", everyItem(equalTo("succeeded")))
                        .body("deliveries[0].attempts[0].status", equalTo(200));
                fired.add(entry.getKey());
            });
        }
        assertEquals(10, fired.size(), "seven project events and three registry events: " + fired);
        as(Contract.AUTOMATIONS, admin).get(PROJECT_PATH + "/automations").then().statusCode(200)
                .body("automations.event",
                        containsInAnyOrder("ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_TAG", "LINK_ARTIFACT", "CREATE_ARTIFACT",
                                "RUN_METRIC_THRESHOLD", "RUN_METRIC_CHANGE", "RUN_STATE"))
                .body("automations.find { it.event == 'ADD_ARTIFACT_ALIAS' }.granted_secrets", contains("DEPLOY_TOKEN"))
                .body("automations.find { it.event == 'RUN_METRIC_THRESHOLD' }.metric_threshold.threshold",
                        equalTo(0.5f));
        as(Contract.AUTOMATIONS, admin).queryParam("limit", 100).get(webhookPath() + "/deliveries").then()
                .statusCode(200).body("deliveries.size()", equalTo(made.at("/deliveries/count").asInt()));
    }

    @Test
    @Order(4)
    void artifactsWithTheirFilesAliasesTagsAndRegistryLinks() throws Exception {
        JsonNode v0 = made.at("/artifacts/versions/v0");
        as(Contract.ARTIFACTS, admin).get(WEIGHTS + "/versions/v0").then().statusCode(200)
                .body("digest", equalTo(v0.get("digest").asText())).body("metadata.accuracy", equalTo(0.91f))
                .body("aliases", contains("production")).body("tags", contains("reviewed"))
                .body("files.path", contains("config.json", "weights.bin"));
        as(Contract.ARTIFACTS, admin).get(WEIGHTS + "/versions/v1").then().statusCode(200)
                .body("digest", equalTo(made.at("/artifacts/versions/v1/digest").asText()))
                .body("aliases", contains("latest"));
        for (String file : List.of("weights.bin", "config.json")) {
            byte[] bytes = as(Contract.ARTIFACTS, admin).queryParam("path", file).get(WEIGHTS + "/versions/v0/download")
                    .then().statusCode(200).extract().asByteArray();
            assertEquals(made.at("/artifacts/files/" + file).asText(), sha256(bytes),
                    file + " as the earlier release stored it");
        }
        String registry = "/api/v1/registries/" + made.at("/registry/name").asText() + "/collections/chat/versions/v0";
        as(Contract.ARTIFACTS, admin).get(registry).then().statusCode(200)
                .body("digest", equalTo(v0.get("digest").asText())).body("aliases", hasItem("staging"))
                .body("tags", contains("approved")).body("reference", equalTo("wandb-artifact:///lab/demo/weights:v0"));
        byte[] linked = as(Contract.ARTIFACTS, admin).queryParam("path", "weights.bin").get(registry + "/download")
                .then().statusCode(200).extract().asByteArray();
        assertEquals(made.at("/artifacts/files/weights.bin").asText(), sha256(linked));
        as(Contract.EVENTS, admin).get(PROJECT_PATH + "/events").then().statusCode(200).body("events.size()",
                greaterThan(0));
    }

    @Test
    @Order(5)
    void aRunWithItsHistory() {
        JsonNode run = made.get("run");
        String path = PROJECT_PATH + "/runs/" + run.get("name").asText();
        as(Contract.RUNS, admin).get(path).then().statusCode(200).body("state", equalTo("finished"))
                .body("history_rows", equalTo(run.get("history").size())).body("config.layers", equalTo(2));
        as(Contract.RUNS, admin).get(path + "/history").then().statusCode(200)
                .body("rows.loss", contains(0.9f, 0.6f, 0.45f, 0.3f)).body("rows._step", contains(0, 1, 2, 3));
        as(Contract.RUNS, admin).get(path + "/summary").then().statusCode(200).body("accuracy", equalTo(0.82f));
    }

    @Test
    @Order(6)
    void datasetsObjectsCallsAndFeedback() throws IOException {
        JsonNode qa = made.at("/weave/datasets/qa");
        for (String version : List.of("v0", "v1")) {
            String digest = qa.at("/" + version + "/digest").asText();
            String rows = as(Contract.DATASETS, admin).get("/v2/lab/demo/datasets/qa/versions/" + digest).then()
                    .statusCode(200).body("name", equalTo("qa")).extract().path("rows");
            String table = rows.substring(rows.lastIndexOf('/') + 1);
            List<String> lines = as(Contract.DATASETS, admin).get("/v2/lab/demo/tables/" + table + "/rows").then()
                    .statusCode(200).extract().asString().lines().toList();
            assertEquals(version.equals("v0") ? 1 : 2, lines.size(), String.join("\n", lines));
            for (int i = 0; i < lines.size(); i++) {
                assertEquals(qa.at("/rows/" + i), json.readTree(lines.get(i)).get("val"));
            }
        }
        as(Contract.DATASETS, admin)
                .body(Map.of("project_id", "lab/demo", "object_id", "prompt", "digest",
                        made.at("/weave/object/digest").asText()))
                .post("/obj/read").then().statusCode(200).body("obj.val.template", equalTo("Answer {q}"));
        made.at("/weave/calls").fields().forEachRemaining(call -> as(Contract.DATASETS, admin)
                .body(Map.of("project_id", "lab/demo", "id", call.getKey())).post("/call/read").then().statusCode(200)
                .body("call.output", equalTo(call.getValue().asText())).body("call.trace_id", equalTo("trace-1"))
                .body("call.summary.weave.status", equalTo("success")));
        as(Contract.DATASETS, admin).body(Map.of("project_id", "lab/demo")).post("/feedback/query").then()
                .statusCode(200).body("result.id", contains(made.at("/weave/feedback/id").asText()))
                .body("result[0].payload.note", equalTo("correct"));
    }

    @Test
    @Order(7)
    void catalogModelsAndUsage() {
        as(Contract.INFERENCE, admin).get("/api/v1/admin/models/upstream-chat").then().statusCode(200)
                .body("backend", equalTo("openai-compatible")).body("has_api_key", equalTo(true))
                .body("upstream_model", equalTo("gpt-upstream"));
        JsonNode usage = made.at("/inference/usage/0");
        // the day the fixture was made, not the default last 30 days
        LocalDate day = OffsetDateTime.parse(made.at("/artifacts/versions/v0/created_at").asText()).toLocalDate();
        as(Contract.INFERENCE, admin).queryParam("entity", TEAM).queryParam("project", "demo")
                .queryParam("group_by", "model").queryParam("from", day.toString())
                .queryParam("to", day.plusDays(2).toString()).get("/api/v1/usage").then().statusCode(200)
                .body("data[0].model", equalTo("fulcrum-tiny"))
                .body("data[0].requests", equalTo(usage.get("requests").asInt()))
                .body("data[0].total_tokens", equalTo(usage.get("total_tokens").asInt()));
    }

    @Test
    @Order(8)
    void trainingModelsJobsAndCheckpoints() throws Exception {
        JsonNode tiny = made.at("/training/tiny");
        String model = "/v1/preview/models/" + tiny.get("id").asText();
        as(Contract.TRAINING, admin).get(model).then().statusCode(200).body("name", equalTo("tiny-agent"))
                .body("base_model", equalTo("fulcrum-tiny")).body("run_id", equalTo(tiny.get("run_id").asText()));
        as(Contract.TRAINING, admin).get(model + "/checkpoints").then().statusCode(200).body("data.step",
                contains(0, 1, 2));
        as(Contract.TRAINING, admin).get(model + "/training-jobs").then().statusCode(200)
                .body("data.id", contains(tiny.at("/jobs/rl").asText(), tiny.at("/jobs/sft").asText()))
                .body("data.kind", contains("rl", "sft")).body("data.status", everyItem(equalTo("succeeded")));
        as(Contract.TRAINING, admin).get("/v1/preview/training-jobs/" + tiny.at("/jobs/sft").asText() + "/events")
                .then().statusCode(200).body("data.type", hasItems("training_started", "training_ended"));
        as(Contract.TRAINING, admin).get(model + "/log").then().statusCode(200).body("data.split", contains("val"));
        // the checkpoint the earlier release trained answers through today's inference
        as(Contract.INFERENCE, made.at("/users/ada/key").asText()).header("OpenAI-Project", "lab/demo")
                .body(Map.of("model", "wandb-artifact:///lab/demo/tiny-agent:step2", "messages",
                        List.of(Map.of("role", "user", "content", "Hi")), "max_tokens", 4))
                .post("/v1/chat/completions").then().statusCode(200).body("usage.completion_tokens", greaterThan(0));

        JsonNode gpu = made.at("/training/gpu");
        as(Contract.TRAINING, admin).get("/v1/preview/models/" + gpu.get("id").asText() + "/checkpoints").then()
                .statusCode(200).body("data.step", contains(0, 1)).body("data[1].metrics.loss", equalTo(0.25f));
        as(Contract.TRAINING, admin).get("/v1/preview/training-jobs/" + gpu.get("job").asText()).then().statusCode(200)
                .body("status", equalTo("succeeded")).body("checkpoint_step", equalTo(1));
        byte[] adapter = as(Contract.ARTIFACTS, admin).queryParam("path", "adapter_config.json")
                .get(PROJECT_PATH + "/artifacts/collections/gpu-agent/versions/v1/download").then().statusCode(200)
                .extract().asByteArray();
        assertEquals(gpu.get("adapter_sha256").asText(), sha256(adapter), "the worker's upload, as it was stored");
        // the earlier release's worker registration still claims (nothing is queued)
        as(Contract.TRAINING, admin).queryParam("wait", 0)
                .post("/api/v1/workers/" + made.at("/training/worker/id").asText() + "/claim").then().statusCode(204);
    }

    @Test
    @Order(9)
    void theConsoleSignsInAndShowsTheProject() {
        String cookie = given().baseUri(base()).header("Origin", base()).contentType(ContentType.URLENC)
                .formParam("api_key", made.at("/users/ada/key").asText()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie("fulcrum_console");
        given().baseUri(base()).cookie("fulcrum_console", cookie).redirects().follow(false)
                .get("/console/projects/lab/demo").then().statusCode(200)
                .body(containsString("weights"), containsString("baseline"), containsString("tiny-agent"));
    }

    /** Changes the webhook's URL and an alias, so it runs after every read. */
    @Test
    @Order(10)
    void anAutomationFiresWithTheSecretsTheEarlierReleaseSealed() throws Exception {
        try (WebhookReceiver receiver = new WebhookReceiver()) {
            // the fixture's webhook pointed at the script's receiver; only its URL changes, its secrets stay sealed
            as(Contract.AUTOMATIONS, admin)
                    .body(Map.of("name", "ci", "url", receiver.url("/hook"), "access_token_secret", "TOKEN",
                            "signing_secret", "SIGNING"))
                    .put(webhookPath()).then().statusCode(200).body("url", equalTo(receiver.url("/hook")));
            as(Contract.ARTIFACTS, made.at("/users/ada/key").asText()).put(WEIGHTS + "/versions/v1/aliases/production")
                    .then().statusCode(200);

            WebhookReceiver.Received delivery = receiver
                    .await(request -> request.json().path("event").asText().equals("ADD_ARTIFACT_ALIAS"));
            JsonNode secrets = made.get("secrets");
            assertEquals("lab/demo/weights:production", delivery.json().get("version").asText());
            assertEquals("production", delivery.json().get("alias").asText());
            assertEquals(secrets.get("DEPLOY_TOKEN").asText(), delivery.json().get("deploy_token").asText());
            assertEquals("Bearer " + secrets.get("TOKEN").asText(), delivery.header("Authorization"));
            assertTrue(delivery.signedWith(secrets.get("SIGNING").asText()), "signed with the sealed secret");
            assertEquals(standardSignature(secrets.get("SIGNING").asText(), delivery),
                    delivery.header("webhook-signature"));
            // the receiver stays up until the sender has written its answer down
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> as(Contract.AUTOMATIONS, admin)
                            .get(PROJECT_PATH + "/automations/"
                                    + made.at("/automations/project/ADD_ARTIFACT_ALIAS/id").asLong())
                            .then().statusCode(200).body("last_delivery.state", equalTo("succeeded"))
                            .body("last_delivery.id", greaterThan(made.at("/deliveries/count").asInt())));
        }
    }

    /** Changes a catalog model's URL, so it runs after every read. */
    @Test
    @Order(11)
    void aCatalogModelReachesItsUpstreamWithTheKeyTheEarlierReleaseSealed() throws Exception {
        String completion = "{\"id\":\"chatcmpl-upstream\",\"object\":\"chat.completion\",\"created\":1,"
                + "\"model\":\"gpt-upstream\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"from upstream\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}";
        try (WebhookReceiver upstream = new WebhookReceiver(
                new WebhookReceiver.Answer(200, Map.of("Content-Type", "application/json"), completion, 0))) {
            // only the URL changes: an absent api_key keeps the one the earlier release sealed
            as(Contract.INFERENCE, admin)
                    .body(Map.of("backend", "openai-compatible", "base_url", upstream.url("/v1"), "upstream_model",
                            "gpt-upstream"))
                    .put("/api/v1/admin/models/upstream-chat").then().statusCode(200)
                    .body("has_api_key", equalTo(true));
            as(Contract.INFERENCE, made.at("/users/ada/key").asText()).header("OpenAI-Project", "lab/demo")
                    .body(Map.of("model", "upstream-chat", "messages",
                            List.of(Map.of("role", "user", "content", "Hi"))))
                    .post("/v1/chat/completions").then().statusCode(200)
                    .body("choices[0].message.content", equalTo("from upstream"));
            WebhookReceiver.Received request = upstream.awaitAt("/v1/chat/completions");
            assertEquals("Bearer " + made.at("/inference/upstream_api_key").asText(), request.header("Authorization"));
            assertEquals("gpt-upstream", request.json().get("model").asText());
        }
    }

    private String webhookPath() {
        return "/api/v1/teams/" + TEAM + "/webhooks/" + made.at("/webhook/id").asLong();
    }

    private String base() {
        return runs.uri("").toString();
    }

    private RequestSpecification as(Filter contract, String key) {
        return given().baseUri(base()).filter(contract).auth().oauth2(key).contentType(ContentType.JSON).log()
                .ifValidationFails();
    }

    /** The highest version among today's migrations ({@code V<n>__name.sql}). */
    private static String latestMigration() throws IOException {
        Pattern version = Pattern.compile("V(\\d+)__.*\\.sql");
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            return Integer.toString(files.map(file -> version.matcher(file.getFileName().toString()))
                    .filter(Matcher::matches).mapToInt(m -> Integer.parseInt(m.group(1))).max().orElseThrow());
        }
    }

    /** The Standard Webhooks signature: base64 HMAC-SHA256 of id.timestamp.body under the whsec_ secret's bytes. */
    private static String standardSignature(String secret, WebhookReceiver.Received delivery) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(secret.substring("whsec_".length())), "HmacSHA256"));
        String signed = delivery.header("webhook-id") + "." + delivery.header("webhook-timestamp") + ".";
        mac.update(signed.getBytes(StandardCharsets.UTF_8));
        return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(delivery.body()));
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }
}

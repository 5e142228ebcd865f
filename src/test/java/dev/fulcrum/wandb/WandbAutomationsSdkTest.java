package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.FakeSlack;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;
import dev.fulcrum.support.WebhookReceiver.Received;

/**
 * Automations made by the official {@code wandb} SDK, unchanged ({@code src/test/python/wandb_sdk/automations_e2e.py}):
 * its webhook integration is a team webhook, its run metric threshold, z-score, run state, alias-added and
 * collection-tag-added automations are the automations REST API's and fire on what the SDK logs and tags (each delivery
 * signed and checked here), its {@code SendNotification} posts to the team's Slack integration (a fake Slack here), it
 * lists, disables and deletes them, and a team member's create is refused with the SDK's own error.
 */
@QuarkusTest
class WandbAutomationsSdkTest {

    static final String SCRIPT = "wandb_sdk/automations_e2e.py";
    static final String SIGNING = "whsec_c2RrLWF1dG9tYXRpb25zLXNpZ25pbmc=";
    static final String SLACK_TOKEN = "xoxb-sdk-automations";

    static WebhookReceiver receiver;
    static FakeSlack slack;

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void receiver() throws IOException {
        receiver = new WebhookReceiver(Answer.empty(204));
        slack = new FakeSlack();
    }

    @AfterAll
    static void stop() {
        receiver.close();
        slack.close();
    }

    @Test
    void automationsMadeByTheSdkAreFulcrumsAutomations() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Account member = fixtures.user("sdk-member");
        fixtures.member(team, member, Role.MEMBER);
        String project = "sdk-automations";
        WandbSdkTest.as(admin, Contract.ACCOUNTS).body(Map.of("name", project))
                .post("/api/v1/entities/" + team.name + "/projects").then().statusCode(201);
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).body(Map.of("name", "SIGNING", "value", SIGNING))
                .post("/api/v1/teams/" + team.name + "/secrets").then().statusCode(201);
        // the team's Slack integration, registered by its admin through the REST API; the SDK finds and uses it
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).body(Map.of("name", "SLACK_BOT", "value", SLACK_TOKEN))
                .post("/api/v1/teams/" + team.name + "/secrets").then().statusCode(201);
        WandbSdkTest.as(admin, Contract.AUTOMATIONS)
                .body(Map.of("name", "sdk-slack", "channel", "#sdk-alerts", "workspace", "Fulcrum Lab",
                        "bot_token_secret", "SLACK_BOT"))
                .post("/api/v1/teams/" + team.name + "/slack-integrations").then().statusCode(201);

        // the collection the SDK's artifact automations watch: v0 uploaded through the REST API
        io.restassured.RestAssured.given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                .contentType("multipart/form-data")
                .multiPart("file", "w.bin", "v0".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "application/octet-stream")
                .multiPart("type", "model").post("/api/v1/entities/" + team.name + "/projects/" + project
                        + "/artifacts/collections/sdk-model/versions")
                .then().statusCode(201);

        Map<String, String> env = WandbSdkTest.sdkEnv(base, admin, team.name, project);
        env.put("HOOK_URL", receiver.url("/sdk-hook"));
        env.put("MEMBER_KEY", member.key());
        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5), env);

        // a member may not make an automation of the project: the REST API's 403, as the SDK raises it
        assertTrue(output.contains("REFUSED ") && output.contains("This needs the admin role on " + team.name), output);
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        assertEquals(List.of("finished", "loss-zscore", "low-loss", "new-model", "quiet", "reviewed-model",
                "slack-finished", "to-production"), read.getList("listed"));
        assertEquals(List.of("reviewed"), read.getList("collection_tags"));
        assertEquals(List.of("loss", "AVERAGE", 2, "$lt"), read.getList("metric"));
        assertEquals(0.5, read.getDouble("threshold"));
        assertEquals("${metric_value}", read.getString("payload.value"));
        assertEquals("production", read.getString("alias_filter.$or[0].$and[0].alias.$eq"));
        assertEquals(List.of(false, false), read.getList("disabled"));
        assertEquals(List.of("quiet"), read.getList("left"));
        assertEquals("NO_OP", read.getString("quiet"));
        assertEquals(List.of("Run ${run_name} finished", "${run_state} in ${project_name}", "WARN"),
                read.getList("slack"));
        // the SDK's DoNothing is a DoNothing automation: the run's finish fired it, and nothing was sent
        WandbSdkTest.as(admin, Contract.AUTOMATIONS)
                .get("/api/v1/entities/" + team.name + "/projects/" + project + "/automations").then().statusCode(200)
                .body("automations[0].name", equalTo("quiet")).body("automations[0].action_type", equalTo("DoNothing"))
                .body("automations[0].last_fired_at", org.hamcrest.Matchers.notNullValue());

        // the integration is the team's webhook, signed with its secret
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).get("/api/v1/teams/" + team.name + "/webhooks").then()
                .statusCode(200).body("[0].name", equalTo("sdk-hook")).body("[0].signing_secret", equalTo("SIGNING"));

        // each automation fired once, its payload rendered and signed
        List<Received> delivered = receiver.awaitAt("/sdk-hook", 6);
        String runName = read.getString("run");
        for (Received got : delivered) {
            assertTrue(got.signedWith(SIGNING), "X-Service-Signature is the HMAC of the body");
            JsonNode body = got.json();
            switch (body.path("kind").asText()) {
                case "threshold" -> {
                    assertEquals(runName, body.path("run").asText());
                    assertEquals("loss", body.path("metric").asText());
                    assertEquals(0.35, Double.parseDouble(body.path("value").asText()), 1e-9);
                }
                case "zscore" -> {
                    // 0.3 against 0.4, 0.8 and 0.9: mean 0.7, population deviation sqrt(0.14 / 3)
                    assertEquals(0.3, Double.parseDouble(body.path("value").asText()), 1e-9);
                    assertEquals(-0.4 / Math.sqrt(0.14 / 3), Double.parseDouble(body.path("z").asText()), 1e-9);
                    assertEquals("3", body.path("window").asText());
                }
                case "created" -> assertEquals("wandb-artifact:///" + team.name + "/" + project + "/sdk-model:v1",
                        body.path("version").asText());
                case "state" -> {
                    assertEquals(runName, body.path("run").asText());
                    assertEquals("finished", body.path("state").asText());
                }
                case "alias" -> {
                    assertEquals("production", body.path("alias").asText());
                    assertEquals(team.name + "/" + project + "/sdk-model:production", body.path("version").asText());
                }
                case "collection-tag" -> {
                    // the SDK's collection.save() tagged the collection: reviewed fired, draft did not match
                    assertEquals("reviewed", body.path("tag").asText());
                    assertEquals("sdk-model", body.path("collection").asText());
                }
                default -> throw new AssertionError("Unexpected delivery " + got);
            }
        }
        assertEquals(6, delivered.stream().map(got -> got.json().path("kind").asText()).distinct().count(),
                "one delivery of each automation");

        // the SDK's SendNotification posted to Slack with the bot token, its title and text rendered
        FakeSlack.Posted posted = slack.await(SLACK_TOKEN, 1).get(0);
        assertEquals("sdk-alerts", posted.body().getString("channel"));
        assertEquals(":warning: *Run " + runName + " finished*\nfinished in " + project,
                posted.body().getString("text"));
    }
}

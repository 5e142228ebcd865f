package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;
import dev.fulcrum.support.WebhookReceiver.Received;

/**
 * Registry links made by the official {@code wandb} SDK, unchanged
 * ({@code src/test/python/wandb_sdk/registries_e2e.py}): {@code run.link_artifact} and {@code artifact.link} are the
 * REST API's links (read back through the registries API), fire a project's {@code LINK_ARTIFACT} automation, and a
 * project viewer's link is refused with the SDK's own error.
 */
@QuarkusTest
class WandbRegistriesSdkTest {

    static final String SCRIPT = "wandb_sdk/registries_e2e.py";

    static WebhookReceiver receiver;

    @Inject
    Fixtures fixtures;

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

    private Map<String, String> env(Account account, String entity, String project, Registry registry, String mode) {
        Map<String, String> env = WandbSdkTest.sdkEnv(base, account, entity, project);
        env.put("REGISTRY", registry.name);
        env.put("COLLECTION", "sdk-models");
        env.put("MODE", mode);
        return env;
    }

    @Test
    void linksMadeByTheSdkAreTheLinksOfTheRegistriesApi() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Registry registry = fixtures.registry("sdk-registry", admin);
        String project = "sdk-links";
        WandbSdkTest.as(admin, Contract.ACCOUNTS).body(Map.of("name", project))
                .post("/api/v1/entities/" + team.name + "/projects").then().statusCode(201);
        long hook = WandbSdkTest.as(admin, Contract.AUTOMATIONS)
                .body(Map.of("name", "link-hook", "url", receiver.url("/link-hook")))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(201).extract().jsonPath()
                .getLong("id");
        Map<String, Object> automation = new HashMap<>();
        automation.put("name", "on-link");
        automation.put("event", "LINK_ARTIFACT");
        automation.put("team", team.name);
        automation.put("action_type", "Webhooks");
        automation.put("webhook_id", hook);
        automation.put("payload",
                "{\"registry\": \"${registry_name}\", \"collection\": \"${artifact_collection_name}\","
                        + " \"event\": \"${event_type}\"}");
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).body(automation)
                .post("/api/v1/entities/" + team.name + "/projects/" + project + "/automations").then().statusCode(201);

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5),
                env(admin, team.name, project, registry, "link"));
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        assertEquals("sdk-models:v0", read.getString("linked"));
        assertEquals("v1", read.getString("latest"));
        assertEquals(WandbRegistries.ORG_ENTITY, read.getString("entity"));
        assertEquals("wandb-registry-" + registry.name, read.getString("project"));

        // the links are the registries API's: two versions, the alias the SDK asked, the project versions as sources
        String versions = "/api/v1/registries/" + registry.name + "/collections/sdk-models/versions";
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(versions).then().statusCode(200)
                .body("versions.version", contains("v1", "v0"))
                .body("versions.source", contains("wandb-artifact:///" + team.name + "/" + project + "/sdk-model:v1",
                        "wandb-artifact:///" + team.name + "/" + project + "/sdk-model:v0"));
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(versions + "/staging").then().statusCode(200)
                .body("version", equalTo("v0")).body("aliases", hasItem("staging")).body("type", equalTo("model"));

        // each link fired the project's LINK_ARTIFACT automation
        for (Received delivered : receiver.awaitAt("/link-hook", 2)) {
            JsonPath payload = JsonPath.from(delivered.text());
            assertEquals(registry.name, payload.getString("registry"));
            assertEquals("sdk-models", payload.getString("collection"));
            assertEquals("LINK_ARTIFACT", payload.getString("event"));
        }
    }

    @Test
    void aProjectViewersLinkFailsWithTheSdksOwnError() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Registry registry = fixtures.registry("sdk-registry", admin);
        Account viewer = fixtures.user("sdk-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        fixtures.registryMember(registry, viewer, Role.MEMBER);
        String project = "sdk-link-refused";
        String versions = "/api/v1/entities/" + team.name + "/projects/" + project
                + "/artifacts/collections/model/versions";
        io.restassured.RestAssured.given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                .contentType("multipart/form-data")
                .multiPart("file", "w.bin", "weights".getBytes(StandardCharsets.UTF_8), "application/octet-stream")
                .multiPart("type", "model").post(versions).then().statusCode(201);

        Map<String, String> env = env(viewer, team.name, project, registry, "viewer");
        env.put("ARTIFACT", "model:v0");
        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(3), env);
        assertTrue(output.contains("REFUSED wandb.errors.errors.CommError: This needs the member role on " + team.name),
                output);
        WandbSdkTest.as(admin, Contract.ARTIFACTS)
                .get("/api/v1/registries/" + registry.name + "/collections/sdk-models/versions").then().statusCode(404);
    }
}

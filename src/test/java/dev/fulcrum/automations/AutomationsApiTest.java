package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.Fixtures.Account;

/** Managing automations: fields, validation of event fields and payloads, delete confirmation and who may do what. */
@QuarkusTest
class AutomationsApiTest {

    static final String PROBLEM = "application/problem+json";

    @Inject
    AutomationWorld world;

    Team team;
    long hook;
    long tokenHook;

    @BeforeEach
    void team() {
        team = world.team("api");
        team.secret("API_KEY", "v1");
        hook = team.webhook("http://127.0.0.1:9/hook", null, null);
        team.secret("TOKEN", "t");
        tokenHook = team.webhook("http://127.0.0.1:9/token", "TOKEN", null);
    }

    private Map<String, Object> tagAutomation(String name) {
        Map<String, Object> body = AutomationWorld.automation(name, "ADD_ARTIFACT_TAG", team.name(), hook);
        body.put("description", "tell CI");
        body.put("payload", "{\"tag\": \"${tag}\", \"key\": \"$API_KEY\"}");
        body.put("granted_secrets", List.of("API_KEY"));
        return body;
    }

    @Test
    void createGetListUpdateAndDeleteWithConfirmation() {
        long id = AutomationWorld.as(team.admin).body(tagAutomation("notify")).post(team.automations()).then()
                .statusCode(201).body("name", equalTo("notify")).body("event", equalTo("ADD_ARTIFACT_TAG"))
                .body("scope.type", equalTo("project")).body("scope.entity", equalTo(team.name()))
                .body("scope.project", equalTo("proj")).body("team", equalTo(team.name()))
                .body("action_type", equalTo("Webhooks")).body("webhook_id", equalTo((int) hook))
                .body("granted_secrets", equalTo(List.of("API_KEY"))).body("enabled", equalTo(true))
                .body("created_by", equalTo(team.admin.name())).extract().jsonPath().getLong("id");

        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(200)
                .body("description", equalTo("tell CI")).body("payload", containsString("$API_KEY"));
        AutomationWorld.as(team.admin).get(team.automations()).then().statusCode(200).body("automations", hasSize(1))
                .body("automations[0].id", equalTo((int) id));
        AutomationWorld.as(team.admin).body(tagAutomation("notify")).post(team.automations()).then().statusCode(409)
                .contentType(PROBLEM);

        AutomationWorld.as(team.admin).body(Map.of("enabled", false, "name", "notify-ci"))
                .patch(team.automations() + "/" + id).then().statusCode(200).body("enabled", equalTo(false))
                .body("name", equalTo("notify-ci")).body("description", equalTo("tell CI"));
        AutomationWorld.as(team.admin).body(Map.of("enabled", true)).patch(team.automations() + "/" + id).then()
                .statusCode(200).body("enabled", equalTo(true));

        AutomationWorld.as(team.admin).delete(team.automations() + "/" + id).then().statusCode(422).contentType(PROBLEM)
                .body("errors.field", hasItem("confirm"));
        AutomationWorld.as(team.admin).queryParam("confirm", "notify").delete(team.automations() + "/" + id).then()
                .statusCode(422);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(200);
        AutomationWorld.as(team.admin).queryParam("confirm", "notify-ci").delete(team.automations() + "/" + id).then()
                .statusCode(200).body("id", equalTo((int) id)).body("name", equalTo("notify-ci"));
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(404).contentType(PROBLEM);
    }

    @Test
    void payloadsWithUnknownVariablesOrSecretsThatAreNotGrantedAreRejectedByName() {
        Map<String, Object> body = tagAutomation("bad");
        body.put("payload", "{\"a\": \"${not_a_variable}\", \"b\": \"${run_name}\", \"c\": \"$OTHER\"}");
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422).contentType(PROBLEM)
                .body("detail", containsString("not_a_variable")).body("detail", containsString("run_name"))
                .body("errors.message", hasItem(containsString("OTHER"))).body("errors.field", hasItem("payload"));

        body = tagAutomation("missing-secret");
        body.put("granted_secrets", List.of("API_KEY", "NOT_IN_TEAM"));
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422)
                .body("detail", containsString("NOT_IN_TEAM")).body("errors.field", hasItem("granted_secrets"));

        body = tagAutomation("null-secret");
        body.put("granted_secrets", Arrays.asList("API_KEY", null));
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("granted_secrets[1]"));

        body = tagAutomation("not-json");
        body.put("payload", "{\"a\": ");
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("payload"));

        body = tagAutomation("no-token");
        body.put("payload", "{\"token\": \"${ACCESS_TOKEN}\"}");
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422).body("detail",
                containsString("ACCESS_TOKEN"));
        body.put("webhook_id", tokenHook);
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(201);

        body = tagAutomation("metadata");
        body.put("payload", "{\"m\": \"${artifact_metadata.accuracy}\", \"n\": \"${artifact_metadata.a.b}\"}");
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422)
                .body("detail", containsString("artifact_metadata.a.b"))
                .body("detail", not(containsString("artifact_metadata.accuracy")));
    }

    @Test
    void deletingTheWebhookDeletesItsAutomationsAndEventsStillSucceed() {
        long id = team.automation(AutomationWorld.automation("goes", "ADD_ARTIFACT_TAG", team.name(), hook));
        given().filter(AutomationWorld.AUTOMATIONS).auth().oauth2(team.admin.key())
                .delete("/api/v1/teams/" + team.name() + "/webhooks/" + hook).then().statusCode(204);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(404);
        String version = team.upload("model-w", null, "z");
        team.tag("model-w", version, "still-works");
    }

    @Test
    void eventFieldsAreCheckedPerEventAndScope() {
        Map<String, Object> alias = AutomationWorld.automation("alias", "ADD_ARTIFACT_ALIAS", team.name(), hook);
        AutomationWorld.as(team.admin).body(alias).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("alias_regex"));
        alias.put("alias_regex", "(unclosed");
        AutomationWorld.as(team.admin).body(alias).post(team.automations()).then().statusCode(422).body("detail",
                containsString("RE2"));

        Map<String, Object> threshold = AutomationWorld.automation("t", "RUN_METRIC_THRESHOLD", team.name(), hook);
        AutomationWorld.as(team.admin).body(threshold).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("metric_threshold"));
        threshold.put("metric_threshold", Map.of("metric", "loss", "comparison", "<", "threshold", 1, "window", 0));
        AutomationWorld.as(team.admin).body(threshold).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("metric_threshold.window"));

        Map<String, Object> tag = AutomationWorld.automation("f", "ADD_ARTIFACT_TAG", team.name(), hook);
        tag.put("run_filter", Map.of("creator", "someone"));
        AutomationWorld.as(team.admin).body(tag).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("run_filter"));

        Registry registry = world.registry(team.admin);
        Map<String, Object> state = AutomationWorld.automation("s", "RUN_STATE", team.name(), hook);
        AutomationWorld.as(team.admin).body(state).post("/api/v1/registries/" + registry.name + "/automations").then()
                .statusCode(422).body("errors.field", hasItem("event"));

        Map<String, Object> failures = AutomationWorld.automation("failures", "RUN_STATE", team.name(), hook);
        failures.put("run_filter", Map.of("creator", team.admin.name(), "name_regex", "^train"));
        long filtered = team.automation(failures);
        AutomationWorld.as(team.admin).body(Map.of("run_filter", Map.of("name_regex", "^eval")))
                .patch(team.automations() + "/" + filtered).then().statusCode(200)
                .body("run_filter.name_regex", equalTo("^eval")).body("run_filter.creator", nullValue());
        AutomationWorld.as(team.admin).body(Map.of("run_filter", Map.of())).patch(team.automations() + "/" + filtered)
                .then().statusCode(200).body("run_filter", nullValue()).body("run_states", hasSize(2));

        long id = team.automation(AutomationWorld.automation("keep", "ADD_ARTIFACT_TAG", team.name(), hook));
        AutomationWorld.as(team.admin).body(Map.of("event", "RUN_STATE")).patch(team.automations() + "/" + id).then()
                .statusCode(422).body("errors.field", hasItem("event"));
        AutomationWorld.as(team.admin).body(Map.of("webhook_id", 999_999_999)).patch(team.automations() + "/" + id)
                .then().statusCode(404);
    }

    @Test
    void projectAutomationsNeedTheProjectAdminAndTheMemberRoleOnTheWebhooksTeam() {
        Account member = world.user("member");
        Account viewer = world.user("viewer");
        Account outsider = world.user("outsider");
        world.member(team, member, Role.MEMBER);
        world.member(team, viewer, Role.VIEWER);
        long id = team.automation(tagAutomation("existing"));
        String one = team.automations() + "/" + id;

        for (Account caller : new Account[] { member, viewer, outsider }) {
            AutomationWorld.as(caller).get(team.automations()).then().statusCode(403).contentType(PROBLEM);
            AutomationWorld.as(caller).body(tagAutomation("x")).post(team.automations()).then().statusCode(403);
            AutomationWorld.as(caller).get(one).then().statusCode(403);
            AutomationWorld.as(caller).body(Map.of("enabled", false)).patch(one).then().statusCode(403);
            AutomationWorld.as(caller).queryParam("confirm", "existing").delete(one).then().statusCode(403);
        }
        given().filter(AutomationWorld.AUTOMATIONS).get(team.automations()).then().statusCode(401).contentType(PROBLEM);
        given().filter(AutomationWorld.AUTOMATIONS).auth().oauth2("not-a-key").contentType(ContentType.JSON)
                .body(tagAutomation("x")).post(team.automations()).then().statusCode(401);

        // an admin of another team's project cannot use this team's webhook, and this admin not the other's
        Team other = world.team("other");
        Map<String, Object> foreign = AutomationWorld.automation("foreign", "ADD_ARTIFACT_TAG", team.name(), hook);
        AutomationWorld.as(other.admin).body(foreign).post(other.automations()).then().statusCode(403)
                .contentType(PROBLEM);
        long otherHook = other.webhook("http://127.0.0.1:9/other", null, null);
        Map<String, Object> mismatch = AutomationWorld.automation("mismatch", "ADD_ARTIFACT_TAG", team.name(),
                otherHook);
        AutomationWorld.as(team.admin).body(mismatch).post(team.automations()).then().statusCode(404);
        // a viewer of the webhook's team only reads; a member who administers the project may use the webhook
        world.member(team, other.admin, Role.VIEWER);
        AutomationWorld.as(other.admin).body(foreign).post(other.automations()).then().statusCode(403)
                .contentType(PROBLEM).body("detail", containsString("needs the member role"));
        world.member(team, other.admin, Role.MEMBER);
        AutomationWorld.as(other.admin).body(foreign).post(other.automations()).then().statusCode(201)
                .body("team", equalTo(team.name())).body("acts_as", equalTo(other.admin.name()));
    }

    @Test
    void registryAutomationsNeedTheRegistryAdmin() {
        Registry registry = world.registry(team.admin);
        String path = "/api/v1/registries/" + registry.name + "/automations";
        Account member = world.user("rmember");
        Account viewer = world.user("rviewer");
        Account outsider = world.user("routsider");
        world.registryMember(registry, member, Role.MEMBER);
        world.registryMember(registry, viewer, Role.VIEWER);
        world.member(team, member, Role.MEMBER);
        Map<String, Object> body = AutomationWorld.automation("reg", "LINK_ARTIFACT", team.name(), hook);

        for (Account caller : new Account[] { member, viewer, outsider }) {
            AutomationWorld.as(caller).body(body).post(path).then().statusCode(403);
            AutomationWorld.as(caller).get(path).then().statusCode(403);
        }
        given().filter(AutomationWorld.AUTOMATIONS).get(path).then().statusCode(401);
        long id = AutomationWorld.as(team.admin).body(body).post(path).then().statusCode(201)
                .body("scope.type", equalTo("registry")).body("scope.registry", equalTo(registry.name))
                .body("scope.entity", nullValue()).extract().jsonPath().getLong("id");
        AutomationWorld.as(member).queryParam("confirm", "reg").delete(path + "/" + id).then().statusCode(403);
        AutomationWorld.as(team.admin).get(path + "/" + id).then().statusCode(200);
        AutomationWorld.as(team.admin).queryParam("confirm", "reg").delete(path + "/" + id).then().statusCode(200)
                .body("name", equalTo("reg"));
    }
}

package dev.fulcrum.wandb;

import static dev.fulcrum.wandb.WandbGraphqlTest.graphql;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The SDK's automation documents ({@code wandb/automations/_generated/operations.py}) as the automations REST API's
 * automations: rights decided by the automations service (project or registry admins, the webhook's team's roles),
 * registries addressed as the SDK addresses them, and what Fulcrum has not refused with a 422 naming it.
 */
@QuarkusTest
class WandbAutomationsGraphqlTest {

    static final String CREATE_HOOK = """
            mutation CreateGenericWebhookIntegration($input: CreateGenericWebhookIntegrationInput!) {
              result: createGenericWebhookIntegration(input: $input) { integration { __typename
                ... on GenericWebhookIntegration { id name urlEndpoint } } } }""";
    static final String CREATE = """
            mutation CreateAutomation($input: CreateFilterTriggerInput!) {
              result: createFilterTrigger(input: $input) { trigger { id name enabled
                scope { __typename ... on Project { id name } ... on ArtifactSequence { id name } }
                event: triggeringCondition { ... on FilterEventTriggeringCondition { eventType filter } }
                action: triggeredAction { ... on GenericWebhookTriggeredAction { integration { id name urlEndpoint }
                  requestPayload } } } } }""";
    static final String TRIGGERS = """
            query GetEntityAutomations($entity: String!, $filters: JSONString) {
              scope: entity(name: $entity) { triggers(first: 10, filters: $filters) { edges { node { id name
                scope { ... on Project { name } }
                event: triggeringCondition { ... on FilterEventTriggeringCondition { eventType filter } } } } } } }""";
    static final String INTEGRATIONS = """
            query IntegrationsByEntity($entity: String!) {
              entity(name: $entity) { integrations(first: 10) { edges { node { __typename
                ... on GenericWebhookIntegration { id name urlEndpoint } } } } } }""";
    static final String RUN_STATE_FILTER = "{\"run_filter\": \"{\\\"$and\\\": [{\\\"name\\\": {\\\"$regex\\\": "
            + "\\\"^train-\\\"}}]}\", \"run_state_filter\": {\"states\": [\"FINISHED\"]}}";

    @Inject
    Fixtures fixtures;

    private String projectId(Account account, String entity, String project) {
        return graphql(account, "query P($p: String!, $e: String!) { project(name: $p, entityName: $e) { id } }",
                Map.of("p", project, "e", entity)).then().statusCode(200).extract().path("data.project.id");
    }

    private String hook(Account admin, String team, String name) {
        return graphql(admin, CREATE_HOOK,
                Map.of("input", Map.of("entityName", team, "name", name, "urlEndpoint", "http://127.0.0.1:9/" + name)))
                        .then().statusCode(200)
                        .body("data.result.integration.__typename", equalTo("GenericWebhookIntegration")).extract()
                        .path("data.result.integration.id");
    }

    private static Map<String, Object> input(String name, String scopeId, String event, String filter, String hook,
            String payload) {
        Map<String, Object> action = new HashMap<>();
        action.put("integrationID", hook);
        action.put("requestPayload", payload);
        Map<String, Object> input = new HashMap<>();
        input.put("name", name);
        input.put("enabled", true);
        input.put("scopeType", "PROJECT");
        input.put("scopeID", scopeId);
        input.put("triggeringEventType", event);
        input.put("eventFilter", filter);
        input.put("triggeredActionType", "GENERIC_WEBHOOK");
        input.put("triggeredActionConfig", Map.of("genericWebhookActionInput", action));
        return input;
    }

    private String project(Account admin, PlatformEntity team, String name) {
        WandbSdkTest.as(admin, Contract.ACCOUNTS).body(Map.of("name", name))
                .post("/api/v1/entities/" + team.name + "/projects").then().statusCode(201);
        return projectId(admin, team.name, name);
    }

    @Test
    void anAutomationMadeThroughTheDoorIsTheRestApisWithItsRights() {
        Account admin = fixtures.user("gqla");
        PlatformEntity team = fixtures.team("gqla-team", admin);
        Account member = fixtures.user("gqla-member");
        fixtures.member(team, member, Role.MEMBER);
        String scope = project(admin, team, "doors");
        String rest = "/api/v1/entities/" + team.name + "/projects/doors/automations";

        // webhooks are the team admins', through either door
        graphql(member, CREATE_HOOK,
                Map.of("input", Map.of("entityName", team.name, "name", "m", "urlEndpoint", "http://127.0.0.1:9/m")))
                        .then().statusCode(403).body("errors[0].message", containsString("admin"));
        String hook = hook(admin, team.name, "hook");
        // a member is shown the team's Slack integrations (none here), never its webhooks
        graphql(member, INTEGRATIONS, Map.of("entity", team.name)).then().statusCode(200)
                .body("data.entity.integrations.edges", equalTo(List.of())).body("errors", equalTo(null));
        // someone not on the team is refused
        graphql(fixtures.user("gqla-outsider"), INTEGRATIONS, Map.of("entity", team.name)).then().statusCode(403);
        graphql(admin, INTEGRATIONS, Map.of("entity", team.name)).then().statusCode(200)
                .body("data.entity.integrations.edges.node.id", equalTo(List.of(hook)))
                .body("data.entity.integrations.edges.node.urlEndpoint", equalTo(List.of("http://127.0.0.1:9/hook")));

        // a member may not make one (project admins do); the admin's is the REST API's, acting for the admin
        Map<String, Object> made = input("on-finish", scope, "RUN_STATE", RUN_STATE_FILTER, hook,
                "{\"run\": \"${run_name}\"}");
        graphql(member, CREATE, Map.of("input", made)).then().statusCode(403).body("errors[0].message",
                containsString("admin role"));
        String id = graphql(admin, CREATE, Map.of("input", made)).then().statusCode(200)
                .body("data.result.trigger.scope.name", equalTo("doors"))
                .body("data.result.trigger.event.eventType", equalTo("RUN_STATE"))
                .body("data.result.trigger.action.requestPayload", equalTo("{\"run\": \"${run_name}\"}")).extract()
                .path("data.result.trigger.id");
        graphql(admin, CREATE, Map.of("input", made)).then().statusCode(409);
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).get(rest).then().statusCode(200).body("automations", hasSize(1))
                .body("automations[0].event", equalTo("RUN_STATE"))
                .body("automations[0].run_states", equalTo(List.of("finished")))
                .body("automations[0].run_filter.name_regex", equalTo("^train-"))
                .body("automations[0].acts_as", equalTo(admin.name()));

        // listed on the entity (its admins), read back in the SDK's form
        graphql(member, TRIGGERS, Map.of("entity", team.name)).then().statusCode(200)
                .body("data.scope.triggers", equalTo(null)).body("errors[0].extensions.status", equalTo(403));
        graphql(admin, TRIGGERS, Map.of("entity", team.name, "filters", "{\"name\": \"on-finish\"}")).then()
                .statusCode(200).body("data.scope.triggers.edges.node.id", equalTo(List.of(id)))
                .body("data.scope.triggers.edges[0].node.event.filter", containsString("^train-"))
                .body("data.scope.triggers.edges[0].node.event.filter", containsString("FINISHED"));

        // changed and deleted by its admins only
        String update = "mutation U($input: UpdateFilterTriggerInput!) { result: updateFilterTrigger(input: $input) "
                + "{ trigger { enabled } } }";
        graphql(member, update, Map.of("input", Map.of("id", id, "enabled", false))).then().statusCode(403);
        graphql(admin, update, Map.of("input", Map.of("id", id, "enabled", false))).then().statusCode(200)
                .body("data.result.trigger.enabled", equalTo(false));
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).get(rest).then().body("automations[0].enabled", equalTo(false));
        String delete = "mutation D($id: ID!) { result: deleteTrigger(input: {triggerID: $id}) { success } }";
        graphql(member, delete, Map.of("id", id)).then().statusCode(403);
        graphql(admin, delete, Map.of("id", id)).then().statusCode(200).body("data.result.success", equalTo(true));
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).get(rest).then().body("automations", hasSize(0));
        graphql(admin, delete, Map.of("id", id)).then().statusCode(404);
    }

    @Test
    void secretsInThePayloadNeedTheWebhookTeamsAdminRole() {
        Account owner = fixtures.user("gqls");
        PlatformEntity team = fixtures.team("gqls-team", owner);
        Account hooks = fixtures.user("gqls-hooks");
        PlatformEntity other = fixtures.team("gqls-hooks", hooks);
        fixtures.member(other, owner, Role.MEMBER);
        WandbSdkTest.as(hooks, Contract.AUTOMATIONS).body(Map.of("name", "TOKEN", "value", "t0ken"))
                .post("/api/v1/teams/" + other.name + "/secrets").then().statusCode(201);
        String hook = hook(hooks, other.name, "theirs");
        String scope = project(owner, team, "secrets");
        String filter = "{\"$or\": [{\"$and\": []}]}";
        // the project's admin is a member of the webhook's team: the webhook, yes; its team's secrets, no
        graphql(owner, CREATE,
                Map.of("input",
                        input("with-secret", scope, "ADD_ARTIFACT_TAG", filter, hook, "{\"token\": \"$TOKEN\"}")))
                                .then().statusCode(403)
                                .body("errors[0].message", containsString("admin role on the team that owns"));
        graphql(owner, CREATE,
                Map.of("input", input("plain", scope, "ADD_ARTIFACT_TAG", filter, hook, "{\"tag\": \"${tag}\"}")))
                        .then().statusCode(200)
                        .body("data.result.trigger.action.integration.urlEndpoint", equalTo("http://127.0.0.1:9"));
    }

    @Test
    void aRegistryIsTheScopeTheSdkAddresses() {
        Account admin = fixtures.user("gqlr");
        PlatformEntity team = fixtures.team("gqlr-team", admin);
        Registry registry = fixtures.registry("gqlr-registry", admin);
        String hook = hook(admin, team.name, "registry-hook");
        String scope = projectId(admin, WandbRegistries.ORG_ENTITY, "wandb-registry-" + registry.name);
        graphql(admin, CREATE,
                Map.of("input",
                        input("to-prod", scope, "ADD_ARTIFACT_ALIAS",
                                "{\"$or\": [{\"$and\": [{\"alias\": {\"$eq\": \"prod\"}}]}]}", hook, null))).then()
                                        .statusCode(200).body("data.result.trigger.scope.name",
                                                equalTo("wandb-registry-" + registry.name));
        WandbSdkTest.as(admin, Contract.AUTOMATIONS).get("/api/v1/registries/" + registry.name + "/automations").then()
                .statusCode(200).body("automations[0].alias_regex", equalTo("^prod$"));
        graphql(admin, TRIGGERS, Map.of("entity", WandbRegistries.ORG_ENTITY, "filters", "{\"name\": \"to-prod\"}"))
                .then().statusCode(200)
                .body("data.scope.triggers.edges[0].node.scope.name", equalTo("wandb-registry-" + registry.name));
    }

    @Test
    void aCollectionScopeIsItsProjectsAutomationOnThatCollection() {
        Account admin = fixtures.user("gqlc");
        PlatformEntity team = fixtures.team("gqlc-team", admin);
        String hook = hook(admin, team.name, "c");
        project(admin, team, "colls");
        io.restassured.RestAssured.given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                .contentType("multipart/form-data")
                .multiPart("file", "w.bin", "w".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "application/octet-stream")
                .multiPart("type", "model")
                .post("/api/v1/entities/" + team.name + "/projects/colls/artifacts/collections/weights/versions").then()
                .statusCode(201);
        String collection = graphql(admin,
                "query C($e: String!) { project(name: \"colls\", entityName: $e) { artifactCollection(name: "
                        + "\"weights\") { id } } }",
                Map.of("e", team.name)).then().statusCode(200).extract().path("data.project.artifactCollection.id");
        Map<String, Object> made = input("new-weights", collection, "CREATE_ARTIFACT", "{\"$or\": [{\"$and\": []}]}",
                hook, null);
        made.put("scopeType", "ARTIFACT_COLLECTION");
        graphql(admin, CREATE, Map.of("input", made)).then().statusCode(200)
                .body("data.result.trigger.scope.__typename", equalTo("ArtifactSequence"))
                .body("data.result.trigger.scope.name", equalTo("weights"));
        WandbSdkTest.as(admin, Contract.AUTOMATIONS)
                .get("/api/v1/entities/" + team.name + "/projects/colls/automations").then().statusCode(200)
                .body("automations[0].collection", equalTo("weights"))
                .body("automations[0].event", equalTo("CREATE_ARTIFACT"));
        Map<String, Object> run = input("run-on-weights", collection, "RUN_STATE", RUN_STATE_FILTER, hook, null);
        run.put("scopeType", "ARTIFACT_COLLECTION");
        graphql(admin, CREATE, Map.of("input", run)).then().statusCode(422).body("errors[0].message",
                containsString("Only artifact events have a collection"));
    }

    @Test
    void whatFulcrumHasNotIsA422NamingIt() {
        Account admin = fixtures.user("gqln");
        PlatformEntity team = fixtures.team("gqln-team", admin);
        String hook = hook(admin, team.name, "n");
        String scope = project(admin, team, "refusals");
        String none = "{\"$or\": [{\"$and\": []}]}";
        Map<String, Object> entity = input("c", scope, "CREATE_ARTIFACT", none, hook, null);
        entity.put("scopeType", "ENTITY");
        Map<String, Object> queue = input("q", scope, "CREATE_ARTIFACT", none, hook, null);
        queue.put("triggeredActionType", "QUEUE_JOB");
        queue.put("triggeredActionConfig", Map.of("queueJobActionInput", Map.of("queueID", hook)));
        Map<String, Map<String, Object>> refused = Map.of("scopeType PROJECT or ARTIFACT_COLLECTION", entity,
                "Fulcrum has no UPDATE_ARTIFACT_ALIAS automations",
                input("t", scope, "UPDATE_ARTIFACT_ALIAS", none, hook, null), "display name is compared with",
                input("d", scope, "RUN_STATE",
                        RUN_STATE_FILTER.replace("\\\"name\\\"", "\\\"display_name\\\"").replace("$regex", "$ne"), hook,
                        null),
                "queueJobActionInput is not offered", queue, "Not the id of a Project",
                input("s", "eA==", "CREATE_ARTIFACT", none, hook, null), "Must be JSON",
                input("j", scope, "CREATE_ARTIFACT", "{", hook, null), "ADD_ARTIFACT_ALIAS automations need an alias",
                input("a", scope, "ADD_ARTIFACT_ALIAS", none, hook, null));
        refused.forEach((message, input) -> graphql(admin, CREATE, Map.of("input", input)).then().statusCode(422)
                .body("errors[0].message", containsString(message)));
        // a notification goes through a Slack integration: a webhook is none
        Map<String, Object> notification = input("n", scope, "CREATE_ARTIFACT", none, hook, null);
        notification.put("triggeredActionType", "NOTIFICATION");
        notification.put("triggeredActionConfig",
                Map.of("notificationActionInput", Map.of("integrationID", hook, "title", "t")));
        graphql(admin, CREATE, Map.of("input", notification)).then().statusCode(404).body("errors[0].message",
                containsString("Slack integration"));
        // RunEvent.name.contains: the display name, kept and read back as the SDK wrote it
        String contains = RUN_STATE_FILTER.replace("\\\"name\\\"", "\\\"display_name\\\"")
                .replace("$regex", "$contains").replace("^train-", "sweep");
        graphql(admin, CREATE, Map.of("input", input("shown", scope, "RUN_STATE", contains, hook, null))).then()
                .statusCode(200).body("data.result.trigger.event.filter", containsString("display_name"))
                .body("data.result.trigger.event.filter", containsString("$contains"))
                .body("data.result.trigger.event.filter", containsString("sweep"));
        graphql(admin, "mutation D($id: ID!) { result: deleteTrigger(input: {triggerID: $id}) { success } }",
                Map.of("id", "not-an-id")).then().statusCode(422);
    }
}

package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Received;

/**
 * Artifact events (alias, tag, link, create) of projects and registries reach a real endpoint as signed requests with
 * the payload's variables substituted as plain string values.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ArtifactAutomationsTest {

    static final String SIGNING = "s3cr3t-signing-key";
    static final String TOKEN = "bearer-token-value";

    @Inject
    AutomationWorld world;

    @Inject
    EntityManager em;

    WebhookReceiver receiver;

    @BeforeAll
    void receiver() throws Exception {
        receiver = new WebhookReceiver(WebhookReceiver.Answer.empty(204));
    }

    @AfterAll
    void stop() {
        receiver.close();
    }

    private Team team(String path) {
        Team team = world.team("art");
        team.secret("SIGNING_KEY", SIGNING);
        team.secret("DEPLOY_TOKEN", TOKEN);
        return team;
    }

    @Test
    void aTagRegexKeepsTheTagsThatMatch() {
        Team team = team("/tags");
        long hook = team.webhook(receiver.url("/tags"), null, null);
        Map<String, Object> body = AutomationWorld.automation("reviewed-only", "ADD_ARTIFACT_TAG", team.name(), hook);
        body.put("tag_regex", "^review");
        body.put("payload", "{\"tag\": \"${tag}\"}");
        long automation = team.automation(body);
        String version = team.upload("tagged", null, "weights");
        team.tag("tagged", version, "draft");
        team.tag("tagged", version, "reviewed-by-qa");
        assertEquals("reviewed-by-qa", receiver.awaitAt("/tags").json().get("tag").asText());
        assertEquals(1, deliveriesOf(hook), "draft did not match ^review");

        Map<String, Object> link = AutomationWorld.automation("tag-on-link", "LINK_ARTIFACT", team.name(), hook);
        link.put("tag_regex", "x");
        AutomationWorld.as(team.admin).body(link).post(team.automations()).then().statusCode(422);
        AutomationWorld.as(team.admin).body(Map.of("tag_regex", "(")).patch(team.automations() + "/" + automation)
                .then().statusCode(422).body("errors.field", org.hamcrest.Matchers.hasItem("tag_regex"));
    }

    @Test
    void anAutomationOnACollectionFiresForItsVersionsOnly() {
        Team team = team("/collection");
        long hook = team.webhook(receiver.url("/collection"), null, null);
        Map<String, Object> body = AutomationWorld.automation("on-model-b", "CREATE_ARTIFACT", team.name(), hook);
        body.put("collection", "model-b");
        body.put("payload", "{\"collection\": \"${artifact_collection_name}\"}");
        long automation = team.automation(body);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200)
                .body("collection", org.hamcrest.Matchers.equalTo("model-b"));

        team.upload("model-a", null, "weights a");
        team.upload("model-b", null, "weights b");
        assertEquals("model-b", receiver.awaitAt("/collection").json().get("collection").asText());
        assertEquals(1, deliveriesOf(hook), "a version of model-a did not fire");

        // a run event has no collection; "" clears it
        Map<String, Object> run = AutomationWorld.automation("run-in-collection", "RUN_STATE", team.name(), hook);
        run.put("collection", "model-b");
        AutomationWorld.as(team.admin).body(run).post(team.automations()).then().statusCode(422).body("errors.field",
                org.hamcrest.Matchers.hasItem("collection"));
        AutomationWorld.as(team.admin).body(Map.of("collection", "")).patch(team.automations() + "/" + automation)
                .then().statusCode(200)
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("collection")));
        team.upload("model-a", null, "weights a2");
        assertEquals(2, deliveriesOf(hook), "without a collection every collection's versions fire");
    }

    @Test
    void aTagReachesTheEndpointSignedWithThePayloadOfARepositoryDispatch() {
        Team team = team("/dispatch");
        long hook = team.webhook(receiver.url("/dispatch"), "DEPLOY_TOKEN", "SIGNING_KEY");
        Map<String, Object> body = AutomationWorld.automation("dispatch", "ADD_ARTIFACT_TAG", team.name(), hook);
        body.put("payload",
                """
                               {"event_type": "BUILD_AND_DEPLOY", "client_payload": {"event_author": "${event_author}",
                                "artifact_version": "${artifact_version}", "artifact_version_string": "${artifact_version_string}",
                                "artifact_collection_name": "${artifact_collection_name}", "project_name": "${project_name}",
                                "entity_name": "${entity_name}", "tag": "${tag}", "alias": "${alias}", "token": "${ACCESS_TOKEN}",
                        "webhook_secret": "$DEPLOY_TOKEN"}}""");
        team.automation(body);

        String version = team.upload("model-a", null, "weights");
        team.tag("model-a", version, "reviewed");

        Received got = receiver.awaitAt("/dispatch");
        assertTrue(got.signedWith(SIGNING), "X-Service-Signature is the HMAC of the body");
        assertEquals("Bearer " + TOKEN, got.header("Authorization"));
        assertEquals("application/json", got.header("Content-Type"));
        JsonNode json = got.json();
        assertEquals("BUILD_AND_DEPLOY", json.get("event_type").asText());
        JsonNode client = json.get("client_payload");
        assertEquals(team.admin.name(), client.get("event_author").asText());
        assertEquals("wandb-artifact:///" + team.name() + "/proj/model-a:" + version,
                client.get("artifact_version").asText());
        assertEquals(team.name() + "/proj/model-a:" + version, client.get("artifact_version_string").asText());
        assertEquals("model-a", client.get("artifact_collection_name").asText());
        assertEquals("proj", client.get("project_name").asText());
        assertEquals(team.name(), client.get("entity_name").asText());
        assertEquals("reviewed", client.get("tag").asText());
        assertEquals("", client.get("alias").asText());
        assertEquals(TOKEN, client.get("token").asText());
        assertEquals(TOKEN, client.get("webhook_secret").asText(), "the webhook's own secrets need no grant");
    }

    @Test
    void metadataValuesThatLookLikeJsonArriveAsPlainStrings() {
        Team team = team("/inject");
        long hook = team.webhook(receiver.url("/inject"), null, "SIGNING_KEY");
        Map<String, Object> body = AutomationWorld.automation("inject", "CREATE_ARTIFACT", team.name(), hook);
        body.put("payload", """
                {"a": "${artifact_metadata.quote}", "b": "${artifact_metadata.escape}",
                 "c": "x ${artifact_metadata.breakout} y", "d": "${artifact_metadata.nested}",
                 "e": "${artifact_metadata.missing}", "admin": false}""");
        team.automation(body);

        String breakout = "\"},\"admin\":true,\"x\":\"";
        String metadata = "{\"quote\": \"\\\"\", \"escape\": \"\\\\\", \"breakout\": "
                + com.fasterxml.jackson.databind.node.TextNode.valueOf(breakout) + ", \"nested\": {\"k\": [1, \"}\"]}}";
        team.upload("model-i", metadata, "content");

        Received got = receiver.awaitAt("/inject");
        assertTrue(got.signedWith(SIGNING));
        JsonNode json = got.json();
        assertEquals(6, json.size(), "no field was added: " + got.text());
        assertEquals("\"", json.get("a").asText());
        assertEquals("\\", json.get("b").asText());
        assertEquals("x " + breakout + " y", json.get("c").asText());
        assertEquals("{\"k\":[1,\"}\"]}", json.get("d").asText());
        assertEquals("", json.get("e").asText());
        assertFalse(json.get("admin").asBoolean());
    }

    @Test
    void onlyAliasesMatchingTheRegexFire() {
        Team team = team("/alias");
        long hook = team.webhook(receiver.url("/alias"), null, null);
        Map<String, Object> body = AutomationWorld.automation("prod-alias", "ADD_ARTIFACT_ALIAS", team.name(), hook);
        body.put("alias_regex", "^prod");
        body.put("payload", "{\"alias\": \"${alias}\", \"version\": \"${artifact_version_string}\"}");
        team.automation(body);

        String version = team.upload("model-b", null, "one");
        team.alias("model-b", version, "staging");
        team.alias("model-b", version, "production");

        Received got = receiver.awaitAt("/alias");
        assertEquals("production", got.json().get("alias").asText());
        assertEquals(team.name() + "/proj/model-b:production", got.json().get("version").asText());
        assertEquals(1, deliveriesOf(hook), "latest and staging did not match ^prod");
    }

    @Test
    void aRegistryAutomationFiresForCollectionsLinkedAfterItWasCreated() {
        Team team = team("/registry");
        Registry registry = world.registry(team.admin);
        long hook = team.webhook(receiver.url("/registry"), null, "SIGNING_KEY");
        Map<String, Object> link = AutomationWorld.automation("on-link", "LINK_ARTIFACT", team.name(), hook);
        link.put("payload", """
                {"@type": "MessageCard", "@context": "http://schema.org/extensions",
                 "summary": "${artifact_collection_name} linked",
                 "sections": [{"activityTitle": "${event_author} linked ${artifact_version_string}",
                  "text": "Registry ${registry_name}", "facts": [{"name": "Collection",
                  "value": "${artifact_collection_name}"}, {"name": "Event", "value": "${event_type}"}],
                  "markdown": true}]}""");
        AutomationWorld.as(team.admin).body(link).post("/api/v1/registries/" + registry.name + "/automations").then()
                .statusCode(201);

        String version = team.upload("model-c", null, "two");
        team.link("model-c", version, registry.name, "production-models");

        Received got = receiver.awaitAt("/registry");
        assertTrue(got.signedWith(SIGNING));
        JsonNode card = got.json();
        assertEquals("MessageCard", card.get("@type").asText());
        assertEquals("production-models linked", card.get("summary").asText());
        JsonNode section = card.get("sections").get(0);
        assertEquals("Registry " + registry.name, section.get("text").asText());
        assertEquals("production-models", section.get("facts").get(0).get("value").asText());
        assertEquals("LINK_ARTIFACT", section.get("facts").get(1).get("value").asText());
        assertTrue(section.get("markdown").asBoolean());
    }

    @Test
    void registryTagsAndAliasesFireRegistryAutomationsOnly() {
        Team team = team("/registry-labels");
        Registry registry = world.registry(team.admin);
        long registryHook = team.webhook(receiver.url("/registry-tag"), null, null);
        long aliasHook = team.webhook(receiver.url("/registry-alias"), null, null);
        long projectHook = team.webhook(receiver.url("/project-tag"), null, null);
        String automations = "/api/v1/registries/" + registry.name + "/automations";
        Map<String, Object> tag = AutomationWorld.automation("reg-tag", "ADD_ARTIFACT_TAG", team.name(), registryHook);
        tag.put("payload", "{\"tag\": \"${tag}\", \"where\": \"${artifact_version_string}\"}");
        AutomationWorld.as(team.admin).body(tag).post(automations).then().statusCode(201);
        Map<String, Object> alias = AutomationWorld.automation("reg-alias", "ADD_ARTIFACT_ALIAS", team.name(),
                aliasHook);
        alias.put("alias_regex", "^champion$");
        alias.put("payload", "{\"alias\": \"${alias}\", \"collection\": \"${artifact_collection_name}\"}");
        AutomationWorld.as(team.admin).body(alias).post(automations).then().statusCode(201);
        team.automation(AutomationWorld.automation("project-tag", "ADD_ARTIFACT_TAG", team.name(), projectHook));

        String version = team.upload("model-r", null, "four");
        team.link("model-r", version, registry.name, "later-collection");
        String linked = "/api/v1/registries/" + registry.name + "/collections/later-collection/versions/v0";
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).put(linked + "/tags/approved").then()
                .statusCode(200);
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).put(linked + "/aliases/champion").then()
                .statusCode(200);

        JsonNode tagged = receiver.awaitAt("/registry-tag").json();
        assertEquals("approved", tagged.get("tag").asText());
        assertEquals(registry.name + "/later-collection:v0", tagged.get("where").asText());
        JsonNode aliased = receiver.awaitAt("/registry-alias").json();
        assertEquals("champion", aliased.get("alias").asText());
        assertEquals("later-collection", aliased.get("collection").asText());
        assertEquals(1, deliveriesOf(aliasHook), "the automatic latest of the link did not match ^champion$");
        assertEquals(0, deliveriesOf(projectHook), "a tag given in the registry is not an event of the project");
    }

    @Test
    void aCollectionsTagsFireTheirEventsWithTheTagAndNoVersion() {
        Team team = team("/collection-tags");
        long addedHook = team.webhook(receiver.url("/collection-tag-added"), null, null);
        long removedHook = team.webhook(receiver.url("/collection-tag-removed"), null, null);
        Map<String, Object> added = AutomationWorld.automation("tagged", "ADD_COLLECTION_TAG", team.name(), addedHook);
        added.put("tag_regex", "^prod");
        added.put("payload", "{\"tag\": \"${tag}\", \"collection\": \"${artifact_collection_name}\", "
                + "\"type\": \"${artifact_type}\", \"event\": \"${event_type}\", \"by\": \"${event_author}\"}");
        team.automation(added);
        Map<String, Object> removed = AutomationWorld.automation("untagged", "REMOVE_COLLECTION_TAG", team.name(),
                removedHook);
        removed.put("payload", "{\"tag\": \"${tag}\"}");
        team.automation(removed);
        Map<String, Object> versioned = AutomationWorld.automation("versioned", "ADD_COLLECTION_TAG", team.name(),
                addedHook);
        versioned.put("payload", "{\"v\": \"${artifact_version}\"}");
        AutomationWorld.as(team.admin).body(versioned).post(team.automations()).then().statusCode(422)
                .body("errors[0].message", org.hamcrest.Matchers.containsString("artifact_version"));

        team.upload("model-t", null, "weights");
        team.collectionTag("model-t", "staging", true);
        team.collectionTag("model-t", "production", true);
        JsonNode got = receiver.awaitAt("/collection-tag-added").json();
        assertEquals("production", got.get("tag").asText());
        assertEquals("model-t", got.get("collection").asText());
        assertEquals("model", got.get("type").asText());
        assertEquals("ADD_COLLECTION_TAG", got.get("event").asText());
        assertEquals(team.admin.name(), got.get("by").asText());
        assertEquals(1, deliveriesOf(addedHook), "staging did not match ^prod");
        team.collectionTag("model-t", "staging", false);
        assertEquals("staging", receiver.awaitAt("/collection-tag-removed").json().get("tag").asText());
    }

    @Test
    void aRemovedTagAnUnlinkAndARegistryCollectionsTagFireTheirAutomations() {
        Team team = team("/unlink");
        Registry registry = world.registry(team.admin);
        long untagHook = team.webhook(receiver.url("/tag-removed"), null, null);
        long unlinkHook = team.webhook(receiver.url("/unlinked"), null, null);
        long projectUnlinkHook = team.webhook(receiver.url("/project-unlinked"), null, null);
        long registryTagHook = team.webhook(receiver.url("/registry-collection-tag"), null, null);
        Map<String, Object> untag = AutomationWorld.automation("untag", "REMOVE_ARTIFACT_TAG", team.name(), untagHook);
        untag.put("payload", "{\"tag\": \"${tag}\", \"version\": \"${artifact_version_string}\"}");
        team.automation(untag);
        team.automation(
                AutomationWorld.automation("project-unlink", "UNLINK_ARTIFACT", team.name(), projectUnlinkHook));
        String automations = "/api/v1/registries/" + registry.name + "/automations";
        Map<String, Object> unlink = AutomationWorld.automation("unlink", "UNLINK_ARTIFACT", team.name(), unlinkHook);
        unlink.put("payload", "{\"collection\": \"${artifact_collection_name}\", \"registry\": \"${registry_name}\", "
                + "\"event\": \"${event_type}\"}");
        AutomationWorld.as(team.admin).body(unlink).post(automations).then().statusCode(201);
        Map<String, Object> tag = AutomationWorld.automation("reg-collection-tag", "ADD_COLLECTION_TAG", team.name(),
                registryTagHook);
        tag.put("payload", "{\"tag\": \"${tag}\", \"registry\": \"${registry_name}\", "
                + "\"collection\": \"${artifact_collection_name}\"}");
        AutomationWorld.as(team.admin).body(tag).post(automations).then().statusCode(201);

        String version = team.upload("model-u", null, "weights");
        team.tag("model-u", version, "candidate");
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key())
                .delete(team.collection("model-u") + "/versions/" + version + "/tags/candidate").then().statusCode(200);
        JsonNode untagged = receiver.awaitAt("/tag-removed").json();
        assertEquals("candidate", untagged.get("tag").asText());
        assertEquals(team.name() + "/proj/model-u:" + version, untagged.get("version").asText());

        team.link("model-u", version, registry.name, "shelf");
        String shelf = "/api/v1/registries/" + registry.name + "/collections/shelf";
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).put(shelf + "/tags/reviewed").then()
                .statusCode(200);
        JsonNode tagged = receiver.awaitAt("/registry-collection-tag").json();
        assertEquals("reviewed", tagged.get("tag").asText());
        assertEquals(registry.name, tagged.get("registry").asText());
        assertEquals("shelf", tagged.get("collection").asText());

        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).delete(shelf + "/versions/v0").then()
                .statusCode(204);
        JsonNode unlinked = receiver.awaitAt("/unlinked").json();
        assertEquals("shelf", unlinked.get("collection").asText());
        assertEquals(registry.name, unlinked.get("registry").asText());
        assertEquals("UNLINK_ARTIFACT", unlinked.get("event").asText());
        receiver.awaitAt("/project-unlinked");
    }

    @Test
    void aDoNothingAutomationRecordsItsFiringsAndSendsNothing() {
        Team team = team("/nothing");
        long hook = team.webhook(receiver.url("/nothing"), null, null);
        Map<String, Object> body = new java.util.HashMap<>(Map.of("name", "quiet", "event", "ADD_COLLECTION_TAG",
                "action_type", "DoNothing", "tag_regex", "^prod"));
        Map<String, Object> withHook = new java.util.HashMap<>(body);
        withHook.put("team", team.name());
        withHook.put("webhook_id", hook);
        withHook.put("payload", "{}");
        AutomationWorld.as(team.admin).body(withHook).post(team.automations()).then().statusCode(422)
                .body("errors.field", org.hamcrest.Matchers.hasItems("team", "webhook_id", "payload"));
        long id = team.automation(body);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(200)
                .body("action_type", org.hamcrest.Matchers.equalTo("DoNothing"))
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("webhook_id")))
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("last_fired_at")));

        team.upload("model-n", null, "weights");
        team.collectionTag("model-n", "draft", true);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(200).body("$",
                org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("last_fired_at")));
        team.collectionTag("model-n", "production", true);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + id).then().statusCode(200)
                .body("last_fired_at", org.hamcrest.Matchers.notNullValue())
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("last_delivery")));
        assertEquals(1L, firingsOf(id), "draft did not match ^prod");
        assertEquals(0, deliveriesOf(hook));

        // to Webhooks it needs its webhook; back to DoNothing the webhook, payload and secrets go
        AutomationWorld.as(team.admin).body(Map.of("action_type", "Webhooks")).patch(team.automations() + "/" + id)
                .then().statusCode(422).body("errors.field", org.hamcrest.Matchers.hasItems("team", "webhook_id"));
        AutomationWorld.as(team.admin)
                .body(Map.of("action_type", "Webhooks", "team", team.name(), "webhook_id", hook, "payload",
                        "{\"tag\": \"${tag}\"}"))
                .patch(team.automations() + "/" + id).then().statusCode(200)
                .body("action_type", org.hamcrest.Matchers.equalTo("Webhooks"))
                .body("webhook_id", org.hamcrest.Matchers.equalTo((int) hook));
        team.collectionTag("model-n", "prod-2", true);
        assertEquals("prod-2", receiver.awaitAt("/nothing").json().get("tag").asText());
        AutomationWorld.as(team.admin).body(Map.of("action_type", "DoNothing")).patch(team.automations() + "/" + id)
                .then().statusCode(200).body("action_type", org.hamcrest.Matchers.equalTo("DoNothing"))
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("payload")));
        team.collectionTag("model-n", "prod-3", true);
        assertEquals(2L, firingsOf(id));
        assertEquals(1, deliveriesOf(hook));
    }

    private long firingsOf(long automationId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em
                        .createNativeQuery("select count(*) from automation_firings where automation_id = ?1")
                        .setParameter(1, automationId).getSingleResult()).longValue());
    }

    @Test
    void aDisabledAutomationDoesNotFire() {
        Team team = team("/disabled");
        long disabledHook = team.webhook(receiver.url("/disabled"), null, null);
        long enabledHook = team.webhook(receiver.url("/enabled"), null, null);
        Map<String, Object> off = AutomationWorld.automation("off", "ADD_ARTIFACT_TAG", team.name(), disabledHook);
        off.put("enabled", false);
        team.automation(off);
        long on = team.automation(AutomationWorld.automation("on", "ADD_ARTIFACT_TAG", team.name(), enabledHook));

        String version = team.upload("model-d", null, "three");
        team.tag("model-d", version, "t1");
        receiver.awaitAt("/enabled");
        assertEquals(0, deliveriesOf(disabledHook));

        AutomationWorld.as(team.admin).body(Map.of("enabled", false)).patch(team.automations() + "/" + on).then()
                .statusCode(200);
        team.tag("model-d", version, "t2");
        assertEquals(1, deliveriesOf(enabledHook), "disabled by PATCH: the second tag sent nothing");
        assertEquals(List.of(), receiver.received("/disabled"));
    }

    private long deliveriesOf(long webhookId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em
                        .createNativeQuery("select count(*) from webhook_deliveries where webhook_id = ?1")
                        .setParameter(1, webhookId).getSingleResult()).longValue());
    }
}

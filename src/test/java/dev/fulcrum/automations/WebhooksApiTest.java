package dev.fulcrum.automations;

import static dev.fulcrum.automations.WebhooksClient.as;
import static dev.fulcrum.automations.WebhooksClient.asKey;
import static dev.fulcrum.automations.WebhooksClient.asServerAdmin;
import static dev.fulcrum.automations.WebhooksClient.webhook;
import static dev.fulcrum.automations.WebhooksClient.webhooks;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

@QuarkusTest
class WebhooksApiTest extends LabTest {

    @Inject
    Webhooks service;

    private PlatformEntity otherTeam;

    @BeforeEach
    void otherTeamAndSecrets() {
        otherTeam = fixtures.team("other", outsider);
        WebhooksClient.secret(admin, team.name, "TOKEN", "token-value");
        WebhooksClient.secret(admin, team.name, "SIGNING", "signing-value");
    }

    @Test
    void createReadUpdateDelete() {
        long id = as(admin).body(webhook("ci", "https://example.com/hook", "TOKEN", "SIGNING"))
                .post(webhooks(team.name)).then().statusCode(201).body("name", equalTo("ci"))
                .body("team", equalTo(team.name)).body("url", equalTo("https://example.com/hook"))
                .body("access_token_secret", equalTo("TOKEN")).body("signing_secret", equalTo("SIGNING"))
                .body("enabled", equalTo(true)).body("disabled_reason", nullValue()).extract().jsonPath().getLong("id");
        String path = webhooks(team.name) + "/" + id;
        as(admin).get(path).then().statusCode(200).body("id", equalTo((int) id));
        as(admin).body(webhook("plain", "https://example.org/other", null, null)).post(webhooks(team.name)).then()
                .statusCode(201);
        as(admin).get(webhooks(team.name)).then().statusCode(200).body("name", contains("ci", "plain"));

        Map<String, Object> update = webhook("ci-2", "https://example.com/v2", null, "SIGNING");
        update.put("enabled", false);
        as(admin).body(update).put(path).then().statusCode(200).body("name", equalTo("ci-2"))
                .body("access_token_secret", nullValue()).body("signing_secret", equalTo("SIGNING"))
                .body("enabled", equalTo(false));
        as(admin).body(webhook("ci-2", "https://example.com/v3", null, null)).put(path).then().statusCode(200)
                .body("enabled", equalTo(false)).body("url", equalTo("https://example.com/v3"));
        as(admin).body(webhook("plain", "https://example.com/v3", null, null)).put(path).then().statusCode(409);
        as(admin).body(webhook("plain", "https://example.com/dup", null, null)).post(webhooks(team.name)).then()
                .statusCode(409);

        as(admin).delete(path).then().statusCode(204);
        as(admin).get(path).then().statusCode(404);
        as(admin).delete(path).then().statusCode(404);
        as(admin).get(webhooks(otherTeam.name) + "/" + id).then().statusCode(403);
        asServerAdmin().get(webhooks(otherTeam.name) + "/" + id).then().statusCode(404);
    }

    @Test
    void invalidSettingsAreNamed() {
        String path = webhooks(team.name);
        as(admin).body(Map.of("url", "https://example.com/")).post(path).then().statusCode(422).body("errors.field",
                contains("name"));
        as(admin).body(Map.of("name", "x")).post(path).then().statusCode(422).body("errors.field", contains("url"));
        as(admin).body(webhook("x", "ftp://example.com/", null, null)).post(path).then().statusCode(422)
                .body("errors[0].field", equalTo("url")).body("errors[0].message", containsString("https://"));
        as(admin).body(webhook("x", "https://169.254.169.254/latest", null, null)).post(path).then().statusCode(422)
                .body("errors[0].message", containsString("metadata"));
        as(admin).body(webhook("x", "https://10.0.0.7/hook", null, null)).post(path).then().statusCode(422)
                .body("errors[0].message", containsString("private"));
        as(admin).body(webhook("x", "https://user:pw@example.com/", null, null)).post(path).then().statusCode(422);
        // the form of a secret name is the contract's, checked first; then one answer names every secret not held
        as(admin).body(webhook("x", "https://example.com/", "MISSING", "bad name")).post(path).then().statusCode(422)
                .body("errors.field", contains("signing_secret")).body("errors[0].message", equalTo(
                        "A secret name is upper-case letters, digits and _ (not first a digit), at most 128 characters"));
        as(admin).body(webhook("x", "https://example.com/", "MISSING", "ALSO_MISSING")).post(path).then()
                .statusCode(422).body("errors.field", containsInAnyOrder("access_token_secret", "signing_secret"));
        as(admin).body(webhook("x", "https://example.com/", "TOKEN", null)).post(path).then().statusCode(201);
        as(admin).body("[]").post(path).then().statusCode(422);
        as(admin).get(path + "/not-a-number").then().statusCode(422);
    }

    @Test
    void onlyTeamAdminsManageWebhooks() {
        long id = WebhooksClient.createWebhook(admin, team.name, webhook("ci", "https://example.com/h", null, null));
        String list = webhooks(team.name);
        String one = list + "/" + id;
        Map<String, Object> body = webhook("y", "https://example.com/y", null, null);
        as(null).get(list).then().statusCode(401);
        asKey("fk_unknown").get(list).then().statusCode(401);
        asKey("fk_unknown").body(body).post(list).then().statusCode(401);
        for (Account denied : new Account[] { outsider, viewer, member }) {
            as(denied).get(list).then().statusCode(403);
            as(denied).body(body).post(list).then().statusCode(403);
            as(denied).get(one).then().statusCode(403);
            as(denied).body(body).put(one).then().statusCode(403);
            as(denied).delete(one).then().statusCode(403);
            as(denied).body(Map.of()).post(one + "/test").then().statusCode(403);
            as(denied).get(one + "/deliveries").then().statusCode(403);
            as(denied).post(one + "/deliveries/1/redeliver").then().statusCode(403);
            as(denied).queryParam("since", "2020-01-01T00:00:00Z").post(one + "/deliveries/redeliver-failed").then()
                    .statusCode(403);
        }
        as(null).body(Map.of()).post(one + "/test").then().statusCode(401);
        as(null).get(one + "/deliveries").then().statusCode(401);
        asServerAdmin().get(one).then().statusCode(200);
        asServerAdmin().body(body).post(list).then().statusCode(201);
        as(admin).get(list).then().statusCode(200).body("name", contains("ci", "y"));
    }

    @Test
    void membersAndAdminsOfTheTeamMayUseAWebhookViewersMayNot() {
        long id = WebhooksClient.createWebhook(admin, team.name, webhook("ci", "https://example.com/h", null, null));
        for (Account user : new Account[] { member, admin }) {
            WebhookRef ref = fixtures.asCaller(user, () -> service.requireUsable(team.name, id));
            assertEquals(new WebhookRef(id, team.id, team.name, "ci", true), ref);
        }
        for (Account user : new Account[] { viewer, outsider }) {
            assertEquals(ApiException.Kind.FORBIDDEN, fixtures
                    .asCaller(user, () -> assertThrows(ApiException.class, () -> service.requireUsable(team.name, id)))
                    .kind());
        }
        assertEquals(ApiException.Kind.NOT_FOUND,
                fixtures.asCaller(member,
                        () -> assertThrows(ApiException.class, () -> service.requireUsable(team.name, id + 1000)))
                        .kind());
        assertEquals(ApiException.Kind.NOT_FOUND,
                fixtures.asCaller(outsider,
                        () -> assertThrows(ApiException.class, () -> service.requireUsable(otherTeam.name, id)))
                        .kind());
        assertEquals(ApiException.Kind.UNAUTHENTICATED, fixtures
                .asCaller(null, () -> assertThrows(ApiException.class, () -> service.requireUsable(team.name, id)))
                .kind());
    }

    @Test
    void aWebhookGivesPayloadsItsOwnSecrets() {
        long id = WebhooksClient.createWebhook(admin, team.name,
                webhook("signed", "https://example.com/h", "TOKEN", "SIGNING"));
        long plain = WebhooksClient.createWebhook(admin, team.name,
                webhook("plain", "https://example.com/p", null, null));
        assertEquals(Set.of("ACCESS_TOKEN", "TOKEN", "SIGNING"), service.payloadSecretNames(id));
        assertEquals(Map.of("ACCESS_TOKEN", "token-value", "TOKEN", "token-value", "SIGNING", "signing-value"),
                service.payloadSecretValues(id));
        assertEquals(Set.of(), service.payloadSecretNames(plain));
        assertEquals(Map.of(), service.payloadSecretValues(plain));
    }
}

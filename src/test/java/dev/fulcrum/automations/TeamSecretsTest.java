package dev.fulcrum.automations;

import static dev.fulcrum.automations.WebhooksClient.as;
import static dev.fulcrum.automations.WebhooksClient.asKey;
import static dev.fulcrum.automations.WebhooksClient.asServerAdmin;
import static dev.fulcrum.automations.WebhooksClient.secrets;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

@QuarkusTest
class TeamSecretsTest extends LabTest {

    static final String VALUE = "s3cr3t-\"value\"-ü";

    @Inject
    TeamSecrets teamSecrets;

    @Inject
    SecretCipher cipher;

    @Inject
    EntityManager em;

    @BeforeEach
    void otherTeam() {
        fixtures.team("other", outsider);
    }

    @Test
    void valuesAreWriteOnly() {
        String created = as(admin).body(Map.of("name", "API_TOKEN", "value", VALUE)).post(secrets(team.name)).then()
                .statusCode(201).body("name", equalTo("API_TOKEN")).body("$", not(hasItem("value"))).extract()
                .asString();
        assertFalse(created.contains("s3cr3t"), created);
        String listed = as(admin).get(secrets(team.name)).then().statusCode(200).body("name", contains("API_TOKEN"))
                .extract().asString();
        assertFalse(listed.contains("s3cr3t"), listed);
        String updated = as(admin).body(Map.of("value", "second")).put(secrets(team.name) + "/API_TOKEN").then()
                .statusCode(200).body("name", equalTo("API_TOKEN")).extract().asString();
        assertFalse(updated.contains("second"), updated);
        assertEquals(Map.of("API_TOKEN", "second"), teamSecrets.reveal(team.id, List.of("API_TOKEN", "ABSENT")));
        assertEquals(Set.of("API_TOKEN"), teamSecrets.names(team.id));
    }

    @Test
    void valuesAreEncryptedAtRest() {
        as(admin).body(Map.of("name", "DB_PASSWORD", "value", VALUE)).post(secrets(team.name)).then().statusCode(201);
        byte[] stored = QuarkusTransaction.requiringNew()
                .call(() -> (byte[]) em
                        .createNativeQuery("select value from team_secrets where team_id = ?1 and name = ?2")
                        .setParameter(1, team.id).setParameter(2, "DB_PASSWORD").getSingleResult());
        String raw = new String(stored, StandardCharsets.ISO_8859_1);
        assertFalse(raw.contains("s3cr3t"), "the plaintext is not in the row");
        assertEquals(VALUE, cipher.open(stored, "team-secret:" + team.id + ":DB_PASSWORD"));
    }

    @Test
    void validationAndConflicts() {
        as(admin).body(Map.of("name", "lower", "value", "x")).post(secrets(team.name)).then().statusCode(422)
                .contentType("application/problem+json").body("errors[0].field", equalTo("name"));
        as(admin).body(Map.of("name", "1ABC", "value", "x")).post(secrets(team.name)).then().statusCode(422);
        as(admin).body(Map.of("name", "A-B", "value", "x")).post(secrets(team.name)).then().statusCode(422);
        as(admin).body(Map.of("name", "EMPTY", "value", "")).post(secrets(team.name)).then().statusCode(422)
                .body("errors[0].field", equalTo("value"));
        as(admin).body(Map.of("name", "NO_VALUE")).post(secrets(team.name)).then().statusCode(422);
        as(admin).body("{not json").post(secrets(team.name)).then().statusCode(422);
        as(admin).body(Map.of("name", "_OK_1", "value", "x")).post(secrets(team.name)).then().statusCode(201);
        as(admin).body(Map.of("name", "_OK_1", "value", "y")).post(secrets(team.name)).then().statusCode(409);
        as(admin).body(Map.of("value", "y")).put(secrets(team.name) + "/ABSENT").then().statusCode(404);
        as(admin).delete(secrets(team.name) + "/_OK_1").then().statusCode(204);
        as(admin).delete(secrets(team.name) + "/_OK_1").then().statusCode(404);
        as(admin).get(secrets(admin.name())).then().statusCode(404).body("detail", containsString("not found"));
        as(admin).get(secrets("no-such-team")).then().statusCode(404);
    }

    @Test
    void aSecretInUseByAWebhookIsKept() {
        as(admin).body(Map.of("name", "TOKEN", "value", "t")).post(secrets(team.name)).then().statusCode(201);
        WebhooksClient.createWebhook(admin, team.name,
                WebhooksClient.webhook("ci", "https://example.com/hook", "TOKEN", null));
        as(admin).delete(secrets(team.name) + "/TOKEN").then().statusCode(409).body("detail", containsString("ci"));
    }

    @Test
    void onlyTeamAdminsAndServerAdminsManageSecrets() {
        String path = secrets(team.name);
        Map<String, String> body = Map.of("name", "X", "value", "v");
        as(null).get(path).then().statusCode(401);
        asKey("fk_not-a-key").get(path).then().statusCode(401);
        as(null).body(body).post(path).then().statusCode(401);
        for (Account denied : new Account[] { outsider, viewer, member }) {
            as(denied).get(path).then().statusCode(403);
            as(denied).body(body).post(path).then().statusCode(403);
            as(denied).body(Map.of("value", "v")).put(path + "/X").then().statusCode(403);
            as(denied).delete(path + "/X").then().statusCode(403);
        }
        as(admin).body(body).post(path).then().statusCode(201);
        asServerAdmin().body(Map.of("value", "w")).put(path + "/X").then().statusCode(200);
        asServerAdmin().get(path).then().statusCode(200).body("name", contains("X"));
        asServerAdmin().delete(path + "/X").then().statusCode(204);
    }
}

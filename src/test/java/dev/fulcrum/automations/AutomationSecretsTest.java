package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.accounts.User;
import dev.fulcrum.accounts.Users;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;

/**
 * Who may put a team's webhook and secrets into an automation, whose rights an automation acts with when it sends, and
 * that what an echoing endpoint answers never keeps a secret value: team {@code lab} with its admin, member, viewer and
 * an outsider, secrets, and webhooks to an endpoint that echoes each request (body and bearer token) in its answer.
 */
@QuarkusTest
class AutomationSecretsTest extends LabTest {

    static final String PROBLEM = "application/problem+json";

    @Inject
    AutomationWorld world;

    @Inject
    EntityManager em;

    @Inject
    Users users;

    @Inject
    ApiKeys apiKeys;

    WebhookReceiver receiver;
    /** A value a JSON encoder has to escape: quotes, a backslash, a slash and a non-ASCII letter. */
    String ghToken;
    String token;
    String signing;
    /** Webhooks of lab to the echoing endpoint: without credentials, and with the TOKEN bearer and SIGNING. */
    long hook;
    long tokenHook;

    @BeforeEach
    void secretsAndWebhooks() throws Exception {
        receiver = new WebhookReceiver();
        receiver.answer("/echo", Answer.echo());
        String unique = UUID.randomUUID().toString();
        ghToken = "ghp_\"quoted\"/back\\slash-é-" + unique;
        token = "bearer-token-" + unique;
        signing = "signing-secret-" + unique;
        world.secret(team.id, "GH_TOKEN", ghToken);
        world.secret(team.id, "TOKEN", token);
        world.secret(team.id, "SIGNING", signing);
        hook = world.webhook(team.id, receiver.url("/echo"), null, null);
        tokenHook = world.webhook(team.id, receiver.url("/echo"), "TOKEN", "SIGNING");
    }

    @AfterEach
    void stopReceiver() {
        receiver.close();
    }

    // ------------------------------------------------------------------ saving

    @Test
    void usingTheTeamsWebhookNeedsTheMemberRoleViewersOnlyRead() {
        Map<String, Object> plain = automation("plain", hook);
        AutomationWorld.as(viewer).body(plain).post(personal(viewer)).then().statusCode(403).contentType(PROBLEM).body(
                "detail",
                allOf(containsString("viewer of team " + team.name), containsString("needs the member role")));
        AutomationWorld.as(outsider).body(plain).post(personal(outsider)).then().statusCode(403).contentType(PROBLEM)
                .body("detail", containsString("not a member of team " + team.name));
        AutomationWorld.as(member).body(plain).post(personal(member)).then().statusCode(201)
                .body("acts_as", equalTo(member.name())).body("disabled_reason", nullValue());
        AutomationWorld.as(admin).body(plain).post(personal(admin)).then().statusCode(201).body("acts_as",
                equalTo(admin.name()));
    }

    @Test
    void puttingAnySecretIntoAPayloadNeedsTheTeamsAdminRole() {
        List<Map<String, Object>> withSecrets = new ArrayList<>();
        Map<String, Object> granted = automation("granted", hook); // what the hostile pass saved with a 201
        granted.put("granted_secrets", List.of("GH_TOKEN"));
        granted.put("payload", "{\"x\": \"$GH_TOKEN\"}");
        withSecrets.add(granted);
        Map<String, Object> grantOnly = automation("grant-only", hook);
        grantOnly.put("granted_secrets", List.of("GH_TOKEN"));
        withSecrets.add(grantOnly);
        Map<String, Object> accessToken = automation("access-token", tokenHook);
        accessToken.put("payload", "{\"x\": \"${ACCESS_TOKEN}\"}");
        withSecrets.add(accessToken);
        Map<String, Object> ownSecret = automation("own-secret", tokenHook);
        ownSecret.put("payload", "{\"x\": \"${SIGNING}\", \"y\": \"$TOKEN\"}");
        withSecrets.add(ownSecret);

        for (Map<String, Object> body : withSecrets) {
            for (Account caller : new Account[] { viewer, member }) {
                AutomationWorld.as(caller).body(body).post(personal(caller)).then().statusCode(403).contentType(PROBLEM)
                        .body("detail", containsString("of team " + team.name))
                        .body("detail", containsString(caller == member ? "needs the admin role" : "member role"));
            }
            AutomationWorld.as(admin).body(body).post(personal(admin)).then().statusCode(201).body("acts_as",
                    equalTo(admin.name()));
            Account root = serverAdmin();
            AutomationWorld.as(root).body(body).post(personal(root)).then().statusCode(201);
        }
    }

    @Test
    void changingPayloadGrantsOrWebhookIsCheckedForTheCallerWhoChangesIt() {
        // a member of lab who administers a registry edits the automations a lab admin made there
        Registry registry = world.registry(admin);
        world.registryMember(registry, member, Role.ADMIN);
        world.registryMember(registry, viewer, Role.ADMIN);
        String automations = "/api/v1/registries/" + registry.name + "/automations";
        Map<String, Object> body = automation("link", hook);
        body.put("event", "LINK_ARTIFACT");
        body.put("granted_secrets", List.of("GH_TOKEN"));
        body.put("payload", "{\"x\": \"$GH_TOKEN\"}");
        String one = automations + "/" + AutomationWorld.as(admin).body(body).post(automations).then().statusCode(201)
                .extract().jsonPath().getLong("id");

        AutomationWorld.as(member).body(Map.of("description", "renamed", "name", "link-2")).patch(one).then()
                .statusCode(200).body("acts_as", equalTo(admin.name()));
        AutomationWorld.as(member).body(Map.of("payload", "{\"x\": \"${GH_TOKEN}\", \"y\": \"$GH_TOKEN\"}")).patch(one)
                .then().statusCode(403).contentType(PROBLEM).body("detail", containsString("needs the admin role"));
        AutomationWorld.as(member).body(Map.of("granted_secrets", List.of("GH_TOKEN", "TOKEN"))).patch(one).then()
                .statusCode(403);
        AutomationWorld.as(member).body(Map.of("webhook_id", tokenHook)).patch(one).then().statusCode(403);
        AutomationWorld.as(viewer).body(Map.of("payload", "{}", "granted_secrets", List.of())).patch(one).then()
                .statusCode(403).body("detail", containsString("needs the member role"));
        AutomationWorld.as(admin).get(one).then().statusCode(200).body("payload", equalTo("{\"x\": \"$GH_TOKEN\"}"))
                .body("acts_as", equalTo(admin.name()));

        // dropping the secrets is the member's to do, and the automation then acts with the member's rights
        AutomationWorld.as(member).body(Map.of("payload", "{\"tag\": \"${tag}\"}", "granted_secrets", List.of()))
                .patch(one).then().statusCode(200).body("acts_as", equalTo(member.name()))
                .body("granted_secrets", equalTo(List.of()));
        AutomationWorld.as(member).body(Map.of("enabled", false)).patch(one).then().statusCode(200).body("acts_as",
                equalTo(member.name()));
        AutomationWorld.as(viewer).body(Map.of("enabled", true)).patch(one).then().statusCode(403);
        AutomationWorld.as(admin).body(Map.of("enabled", true)).patch(one).then().statusCode(200).body("acts_as",
                equalTo(admin.name()));
    }

    // ------------------------------------------------------------------ firing

    @Test
    void aRemovedMembersAutomationFailsWithoutBeingSentAndIsDisabled() {
        String automations = personal(member);
        long id = AutomationWorld.as(member).body(automation("on-failure", hook)).post(automations).then()
                .statusCode(201).extract().jsonPath().getLong("id");
        String one = automations + "/" + id;
        failRun(member, ownProject(member), "before");
        assertEquals("succeeded", awaitNewest(member, one).getString("deliveries[0].state"));
        assertEquals(1, receiver.received("/echo").size());

        given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key())
                .delete("/api/v1/teams/" + team.name + "/members/" + member.name()).then().statusCode(204);
        failRun(member, ownProject(member), "after");
        JsonPath log = awaitDeliveries(member, one, 2);
        assertEquals("failed", log.getString("deliveries[0].state"));
        assertNull(log.get("deliveries[0].attempts[0].status"));
        assertTrue(log.getString("deliveries[0].attempts[0].error").contains("no longer a member of team " + team.name),
                log.getString("deliveries[0].attempts[0].error"));
        assertEquals(1, receiver.received("/echo").size(), "the refused delivery was not sent");
        AutomationWorld.as(member).get(one).then().statusCode(200).body("enabled", equalTo(false))
                .body("disabled_reason", containsString(member.name() + ", for whom this automation acts,"))
                .body("disabled_reason", containsString("no longer a member of team " + team.name));

        // the removed member cannot switch it back on; while disabled nothing more is queued
        AutomationWorld.as(member).body(Map.of("enabled", true)).patch(one).then().statusCode(403).contentType(PROBLEM);
        failRun(member, ownProject(member), "later");
        AutomationWorld.as(member).get(one + "/deliveries").then().statusCode(200).body("deliveries.size()",
                equalTo(2));
    }

    @Test
    void aDemotedAdminsSecretsAreRefusedAtSendingTimeUntilAnAdminEnablesTheAutomationAgain() {
        Account second = fixtures.user("second-admin");
        fixtures.member(team, second, Role.ADMIN);
        String project = "/api/v1/entities/" + team.name + "/projects/proj";
        run(admin, project, "first");
        Map<String, Object> body = automation("with-secret", tokenHook);
        body.put("granted_secrets", List.of("GH_TOKEN"));
        body.put("payload", "{\"x\": \"$GH_TOKEN\"}");
        long id = AutomationWorld.as(second).body(body).post(project + "/automations").then().statusCode(201)
                .body("acts_as", equalTo(second.name())).extract().jsonPath().getLong("id");
        String one = project + "/automations/" + id;
        failRun(admin, project, "sent");
        long sent = awaitNewest(admin, one).getLong("deliveries[0].id");

        given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                .body(Map.of("role", "member")).put("/api/v1/teams/" + team.name + "/members/" + second.name()).then()
                .statusCode(200);
        // a redelivery is claimed like a retry, and checked like a first attempt
        AutomationWorld.as(admin).post(one + "/deliveries/" + sent + "/redeliver").then().statusCode(202);
        JsonPath log = await("the redelivery is refused").atMost(Duration.ofSeconds(20)).until(
                () -> AutomationWorld.as(admin).get(one + "/deliveries").then().statusCode(200).extract().jsonPath(),
                p -> "failed".equals(p.getString("deliveries[0].state")));
        String error = log.getString("deliveries[0].attempts[1].error");
        assertTrue(error.contains(second.name() + ", for whom this automation acts, is member of team " + team.name)
                && error.contains("needs the admin role"), error);
        assertEquals(1, receiver.received("/echo").size());
        AutomationWorld.as(admin).get(one).then().statusCode(200).body("enabled", equalTo(false))
                .body("disabled_reason", containsString("is member of team " + team.name));

        // an admin of the team enables it again: the reason goes, and it now acts with that admin's rights
        AutomationWorld.as(admin).body(Map.of("enabled", true)).patch(one).then().statusCode(200)
                .body("enabled", equalTo(true)).body("disabled_reason", nullValue())
                .body("acts_as", equalTo(admin.name()));
        failRun(admin, project, "again");
        await("sent again").atMost(Duration.ofSeconds(20)).until(() -> receiver.received("/echo").size() == 2);
        assertTrue(receiver.received("/echo").get(1).text().contains("\"x\":"));
    }

    @Test
    void anAutomationWhoseUserNoLongerExistsIsRefused() {
        Account gone = fixtures.user("gone");
        fixtures.member(team, gone, Role.ADMIN);
        String project = "/api/v1/entities/" + team.name + "/projects/proj";
        run(admin, project, "first");
        long id = AutomationWorld.as(gone).body(automation("orphan", hook)).post(project + "/automations").then()
                .statusCode(201).extract().jsonPath().getLong("id");
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("delete from users where id = ?1")
                .setParameter(1, gone.user().id).executeUpdate());
        String one = project + "/automations/" + id;
        failRun(admin, project, "orphaned");
        JsonPath log = awaitNewest(admin, one);
        assertEquals("failed", log.getString("deliveries[0].state"));
        assertTrue(log.getString("deliveries[0].attempts[0].error").contains("no longer exists"));
        assertEquals(0, receiver.received("/echo").size());
        AutomationWorld.as(admin).get(one).then().statusCode(200).body("enabled", equalTo(false))
                .body("acts_as", nullValue()).body("disabled_reason", containsString("no longer exists"));
    }

    // ------------------------------------------------------------------ what endpoints answer

    @Test
    void anEchoedSecretIsMaskedInTheDeliveryLogAndNeverStoredInPlainText() {
        String project = "/api/v1/entities/" + team.name + "/projects/proj";
        run(admin, project, "first");
        Map<String, Object> body = automation("echoed", tokenHook);
        body.put("granted_secrets", List.of("GH_TOKEN"));
        body.put("payload", "{\"x\": \"$GH_TOKEN\", \"t\": \"${ACCESS_TOKEN}\", \"s\": \"$SIGNING\"}");
        long id = AutomationWorld.as(admin).body(body).post(project + "/automations").then().statusCode(201).extract()
                .jsonPath().getLong("id");
        failRun(admin, project, "echo");
        String one = project + "/automations/" + id;
        JsonPath log = awaitNewest(admin, one);
        assertEquals("succeeded", log.getString("deliveries[0].state"));
        String echoed = receiver.received("/echo").get(0).text();
        assertTrue(echoed.contains(escaped(ghToken)), "the endpoint did get the secret: " + echoed);

        String stored = log.getString("deliveries[0].attempts[0].response_body");
        assertEquals("{\"x\":\"[secret GH_TOKEN]\",\"t\":\"[secret TOKEN]\",\"s\":\"[secret SIGNING]\"}\n"
                + "authorization: Bearer [secret TOKEN]", stored);
        for (String value : forms()) {
            assertFalse(stored.contains(value), value);
        }

        // in PostgreSQL: no attempt row holds a value in any form, the body and the secrets are sealed
        long attempts = QuarkusTransaction.requiringNew().call(() -> ((Number) em.createNativeQuery("""
                select count(*) from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
                where d.automation_id = ?1""").setParameter(1, id).getSingleResult()).longValue());
        assertEquals(1, attempts);
        for (String value : forms()) {
            long plain = QuarkusTransaction.requiringNew().call(() -> ((Number) em.createNativeQuery("""
                    select (select count(*) from webhook_attempts
                            where strpos(response_body, ?1) > 0 or strpos(error, ?1) > 0)
                         + (select count(*) from webhook_deliveries
                            where position(convert_to(?1, 'UTF8') in body) > 0
                               or position(convert_to(?1, 'UTF8') in coalesce(secrets, ''::bytea)) > 0)""")
                    .setParameter(1, value).getSingleResult()).longValue());
            assertEquals(0, plain, "rows holding " + value);
        }
    }

    @Test
    void theTestRequestsAnswerHasEverySecretItSentMasked() {
        given().filter(Contract.AUTOMATIONS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                .body(Map.of("payload", "{\"x\": \"$GH_TOKEN\", \"t\": \"${ACCESS_TOKEN}\"}"))
                .post("/api/v1/teams/" + team.name + "/webhooks/" + tokenHook + "/test").then().statusCode(200)
                .body("ok", equalTo(true))
                .body("body",
                        equalTo("{\"x\":\"[secret GH_TOKEN]\",\"t\":\"[secret TOKEN]\"}\n"
                                + "authorization: Bearer [secret TOKEN]"))
                .body("headers.'x-echo-authorization'", equalTo("Bearer [secret TOKEN]"))
                .body("body", not(containsString(token)));
        assertTrue(receiver.received("/echo").get(0).text().contains(token), "the endpoint did get the token");
    }

    // ------------------------------------------------------------------ helpers

    /** A {@code RUN_STATE} automation sending to a webhook of lab. */
    private Map<String, Object> automation(String name, long webhookId) {
        return AutomationWorld.automation(name, "RUN_STATE", team.name, webhookId);
    }

    /** The automations of the caller's personal project {@code own} (created here by a first run). */
    private String personal(Account owner) {
        run(owner, ownProject(owner), "first-" + UUID.randomUUID().toString().substring(0, 6));
        return ownProject(owner) + "/automations";
    }

    private static String ownProject(Account owner) {
        return "/api/v1/entities/" + owner.name() + "/projects/own";
    }

    private Account serverAdmin() {
        User user = users.create(Fixtures.unique("root"), null, true);
        return new Account(user, apiKeys.create(user.id, "test").secret());
    }

    private static void run(Account who, String project, String run) {
        given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON).body(Map.of("name", run))
                .post(project + "/runs").then().statusCode(201);
    }

    /** A new run that fails: a {@code RUN_STATE} event of the project. */
    private static void failRun(Account who, String project, String run) {
        run(who, project, run);
        given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON)
                .body(Map.of("state", "failed")).patch(project + "/runs/" + run).then().statusCode(200);
    }

    private static JsonPath awaitDeliveries(Account who, String automation, int count) {
        return await(count + " deliveries, the newest done").atMost(Duration.ofSeconds(20)).until(
                () -> AutomationWorld.as(who).get(automation + "/deliveries").then().statusCode(200).extract()
                        .jsonPath(),
                p -> p.getList("deliveries").size() >= count && !"pending".equals(p.getString("deliveries[0].state")));
    }

    private static JsonPath awaitNewest(Account who, String automation) {
        return awaitDeliveries(who, automation, 1);
    }

    private static String escaped(String value) {
        return new String(JsonStringEncoder.getInstance().quoteAsString(value));
    }

    /** Every form of every secret value an echo could carry. */
    private List<String> forms() {
        List<String> forms = new ArrayList<>();
        for (String value : List.of(ghToken, token, signing)) {
            forms.add(value);
            forms.add(escaped(value));
        }
        return forms;
    }
}

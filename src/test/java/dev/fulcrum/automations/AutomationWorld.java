package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * A team with an admin, a project, team secrets and webhooks pointing at a receiver, for automation tests; plus the
 * calls of the automations, artifacts and runs APIs the tests make (each checked against its document).
 */
@ApplicationScoped
public class AutomationWorld {

    static final io.restassured.filter.Filter AUTOMATIONS = Contract.AUTOMATIONS;

    @Inject
    Fixtures fixtures;

    @Inject
    EntityManager em;

    @Inject
    SecretCipher cipher;

    /** One team, its admin and a project of the team (created by a first run). */
    public final class Team {
        final Account admin;
        final PlatformEntity team;
        final String project;

        Team(Account admin, PlatformEntity team, String project) {
            this.admin = admin;
            this.team = team;
            this.project = project;
        }

        String name() {
            return team.name;
        }

        String projectPath() {
            return "/api/v1/entities/" + team.name + "/projects/" + project;
        }

        String automations() {
            return projectPath() + "/automations";
        }

        String collection(String collection) {
            return projectPath() + "/artifacts/collections/" + collection;
        }

        void secret(String name, String value) {
            AutomationWorld.this.secret(team.id, name, value);
        }

        long webhook(String url, String tokenSecret, String signingSecret) {
            return AutomationWorld.this.webhook(team.id, url, tokenSecret, signingSecret);
        }

        /** Creates a project automation as the team admin; answers its id. */
        long automation(Map<String, Object> body) {
            return as(admin).body(body).post(automations()).then().statusCode(201).extract().jsonPath().getLong("id");
        }

        /** Uploads a version of the collection (type model) with the metadata; answers its version ({@code vN}). */
        String upload(String collection, String metadata, String content) {
            RequestSpecification spec = given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                    .contentType("multipart/form-data").multiPart("file", "model.txt", content.getBytes(), "text/plain")
                    .multiPart("type", "model");
            if (metadata != null) {
                spec.multiPart("metadata", metadata);
            }
            Response response = spec.post(collection(collection) + "/versions");
            response.then().statusCode(201);
            return response.jsonPath().getString("version");
        }

        void tag(String collection, String version, String tag) {
            given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                    .put(collection(collection) + "/versions/" + version + "/tags/" + tag).then().statusCode(200);
        }

        /** Adds ({@code add}) or removes the collection's tag. */
        void collectionTag(String collection, String tag, boolean add) {
            RequestSpecification spec = given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key());
            (add ? spec.put(collection(collection) + "/tags/" + tag)
                    : spec.delete(collection(collection) + "/tags/" + tag)).then().statusCode(200);
        }

        void alias(String collection, String version, String alias) {
            given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key())
                    .put(collection(collection) + "/versions/" + version + "/aliases/" + alias).then().statusCode(200);
        }

        void link(String collection, String version, String registry, String registryCollection) {
            given().filter(Contract.ARTIFACTS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                    .body(Map.of("registry", registry, "collection", registryCollection))
                    .post(collection(collection) + "/versions/" + version + "/links").then().statusCode(201);
        }

        void run(Account who, String run) {
            given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON)
                    .body(Map.of("name", run)).post(projectPath() + "/runs").then().statusCode(201);
        }

        /** Creates the run with a display name. */
        void run(Account who, String run, String displayName) {
            given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON)
                    .body(Map.of("name", run, "display_name", displayName)).post(projectPath() + "/runs").then()
                    .statusCode(201);
        }

        void log(Account who, String run, List<Map<String, Object>> rows) {
            given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON).body(rows)
                    .post(projectPath() + "/runs/" + run + "/history").then().statusCode(200);
        }

        void state(Account who, String run, String state) {
            given().filter(Contract.RUNS).auth().oauth2(who.key()).contentType(ContentType.JSON)
                    .body(Map.of("state", state)).patch(projectPath() + "/runs/" + run).then().statusCode(200);
        }
    }

    Team team(String prefix) {
        Account admin = fixtures.user(prefix + "-admin");
        PlatformEntity team = fixtures.team(prefix, admin);
        Team made = new Team(admin, team, "proj");
        made.run(admin, "first");
        return made;
    }

    Account user(String prefix) {
        return fixtures.user(prefix);
    }

    void member(Team team, Account account, Role role) {
        fixtures.member(team.team, account, role);
    }

    Registry registry(Account admin) {
        return fixtures.registry("reg", admin);
    }

    void registryMember(Registry registry, Account account, Role role) {
        fixtures.registryMember(registry, account, role);
    }

    static RequestSpecification as(Account account) {
        RequestSpecification spec = given().filter(AUTOMATIONS).contentType(ContentType.JSON);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    /** A sealed team secret, as the team settings store it. */
    void secret(long teamId, String name, String value) {
        QuarkusTransaction.requiringNew()
                .run(() -> em.createNativeQuery("insert into team_secrets (team_id, name, value) values (?1, ?2, ?3)")
                        .setParameter(1, teamId).setParameter(2, name)
                        .setParameter(3, cipher.seal(value, TeamSecrets.context(teamId, name))).executeUpdate());
    }

    long webhook(long teamId, String url, String tokenSecret, String signingSecret) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery("""
                        insert into webhooks (team_id, name, url, access_token_secret, signing_secret)
                        values (?1, ?2, ?3, ?4, ?5) returning id""").setParameter(1, teamId)
                        .setParameter(2, Fixtures.unique("hook")).setParameter(3, url).setParameter(4, tokenSecret)
                        .setParameter(5, signingSecret).getSingleResult()).longValue());
    }

    /** A minimal automation body; callers add or replace fields. */
    static Map<String, Object> automation(String name, String event, String team, long webhookId) {
        Map<String, Object> body = new HashMap<>();
        body.put("name", name);
        body.put("event", event);
        body.put("team", team);
        body.put("action_type", "Webhooks");
        body.put("webhook_id", webhookId);
        return body;
    }
}

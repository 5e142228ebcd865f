package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;

import java.util.HashMap;
import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures.Account;

/** Calls of the automations API for tests; every response is checked against openapi/automations.yaml. */
final class WebhooksClient {

    private WebhooksClient() {
    }

    static RequestSpecification as(Account account) {
        RequestSpecification spec = given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    static RequestSpecification asKey(String key) {
        return given().filter(Contract.AUTOMATIONS).contentType(ContentType.JSON).auth().oauth2(key);
    }

    static RequestSpecification asServerAdmin() {
        return asKey(EmbeddedPostgresResource.ADMIN_KEY);
    }

    static String secrets(String team) {
        return "/api/v1/teams/" + team + "/secrets";
    }

    static String webhooks(String team) {
        return "/api/v1/teams/" + team + "/webhooks";
    }

    static Map<String, Object> webhook(String name, String url, String token, String signing) {
        Map<String, Object> body = new HashMap<>();
        body.put("name", name);
        body.put("url", url);
        if (token != null) {
            body.put("access_token_secret", token);
        }
        if (signing != null) {
            body.put("signing_secret", signing);
        }
        return body;
    }

    static void secret(Account admin, String team, String name, String value) {
        as(admin).body(Map.of("name", name, "value", value)).post(secrets(team)).then().statusCode(201);
    }

    /** Creates a webhook as the team admin; its id. */
    static long createWebhook(Account admin, String team, Map<String, Object> body) {
        return as(admin).body(body).post(webhooks(team)).then().statusCode(201).extract().jsonPath().getLong("id");
    }
}

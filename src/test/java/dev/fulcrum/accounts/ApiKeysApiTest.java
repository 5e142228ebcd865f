package dev.fulcrum.accounts;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static dev.fulcrum.support.Management.asAdmin;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class ApiKeysApiTest {

    @Inject
    Fixtures fixtures;

    @Test
    void theSecretIsShownOnceAndWorks() {
        Account alice = fixtures.user("alice");
        JsonPath created = as(alice).body(Map.of("name", "laptop")).when().post("/api/v1/users/me/api-keys").then()
                .statusCode(201).body("name", equalTo("laptop")).body("id", notNullValue())
                .body("created_at", notNullValue()).extract().jsonPath();
        String secret = created.getString("key");
        assertPrefix(secret, created.getString("prefix"));

        as(secret).when().get("/api/v1/users/me").then().statusCode(200).body("username", equalTo(alice.name()));
        as(alice).when().get("/api/v1/users/me/api-keys").then().statusCode(200).body("$", hasSize(2))
                .body("find { it.name == 'laptop' }.id", equalTo(created.getInt("id")))
                .body("find { it.name == 'laptop' }.prefix", equalTo(created.getString("prefix")))
                .body("find { it.name == 'laptop' }.revoked_at", nullValue())
                .body("find { it.name == 'laptop' }", not(hasKey("key")))
                .body("find { it.name == 'laptop' }", not(hasKey("key_hash")));
    }

    @Test
    void aRevokedKeyIsRefusedOnTheVeryNextRequest() {
        Account bob = fixtures.user("bob");
        JsonPath created = as(bob).body(Map.of("name", "ci")).when().post("/api/v1/users/me/api-keys").then()
                .statusCode(201).extract().jsonPath();
        String secret = created.getString("key");
        as(secret).when().get("/api/v1/users/me").then().statusCode(200);

        as(bob).when().delete("/api/v1/users/me/api-keys/" + created.getLong("id")).then().statusCode(204);

        as(secret).when().get("/api/v1/users/me").then().statusCode(401).contentType(PROBLEM_JSON);
        as(bob).when().get("/api/v1/users/me/api-keys").then().statusCode(200)
                .body("find { it.name == 'ci' }.revoked_at", notNullValue());
        as(bob).when().delete("/api/v1/users/me/api-keys/" + created.getLong("id")).then().statusCode(204);
    }

    @Test
    void aKeyMayRevokeItself() {
        Account carol = fixtures.user("carol");
        long id = as(carol).when().get("/api/v1/users/me/api-keys").then().statusCode(200).extract().jsonPath()
                .getLong("[0].id");
        as(carol).when().delete("/api/v1/users/me/api-keys/" + id).then().statusCode(204);
        as(carol).when().get("/api/v1/users/me/api-keys").then().statusCode(401);
    }

    @Test
    void otherUsersKeysAndUnknownKeysAreNotFound() {
        Account dave = fixtures.user("dave");
        Account erin = fixtures.user("erin");
        long erinsKey = as(erin).when().get("/api/v1/users/me/api-keys").then().extract().jsonPath().getLong("[0].id");
        as(dave).when().delete("/api/v1/users/me/api-keys/" + erinsKey).then().statusCode(404)
                .contentType(PROBLEM_JSON);
        as(erin).when().get("/api/v1/users/me").then().statusCode(200);
        as(dave).when().delete("/api/v1/users/me/api-keys/999999999").then().statusCode(404);
        as(dave).when().delete("/api/v1/users/me/api-keys/not-a-number").then().statusCode(422)
                .contentType(PROBLEM_JSON).body("errors[0].field", org.hamcrest.Matchers.equalTo("id"));
    }

    @Test
    void keyNamesAreValidated() {
        Account frank = fixtures.user("frank");
        as(frank).body(Map.of("name", " ")).when().post("/api/v1/users/me/api-keys").then().statusCode(422)
                .contentType(PROBLEM_JSON).body("errors[0].field", equalTo("name"));
        as(frank).body(Map.of("name", "k".repeat(129))).when().post("/api/v1/users/me/api-keys").then().statusCode(422);
        as(frank).body(Map.of()).when().post("/api/v1/users/me/api-keys").then().statusCode(422)
                .body("errors[0].field", equalTo("name")).body("errors[0].message", equalTo("Field required"));
        as(frank).when().post("/api/v1/users/me/api-keys").then().statusCode(422);
    }

    @Test
    void withoutAValidKeyNothingIsListedCreatedOrRevoked() {
        anonymous().when().get("/api/v1/users/me/api-keys").then().statusCode(401);
        as("fk_wrong").body(Map.of("name", "x")).when().post("/api/v1/users/me/api-keys").then().statusCode(401);
        anonymous().when().delete("/api/v1/users/me/api-keys/1").then().statusCode(401);
        anonymous().body(Map.of("name", "x")).when().post("/api/v1/users/admin/api-keys").then().statusCode(401);
    }

    @Test
    void serverAdministratorsIssueTheFirstKeyOfANewUser() {
        String name = Fixtures.unique("gina");
        asAdmin().body(Map.of("username", name)).when().post("/api/v1/users").then().statusCode(201);
        String secret = asAdmin().body(Map.of("name", "first")).when().post("/api/v1/users/" + name + "/api-keys")
                .then().statusCode(201).body("name", equalTo("first")).extract().path("key");
        as(secret).when().get("/api/v1/users/me").then().statusCode(200).body("username", equalTo(name));

        Account hank = fixtures.user("hank");
        as(hank).body(Map.of("name", "stolen")).when().post("/api/v1/users/" + name + "/api-keys").then()
                .statusCode(403);
        asAdmin().body(Map.of("name", "x")).when().post("/api/v1/users/no-such-user/api-keys").then().statusCode(404);
    }

    private static void assertPrefix(String secret, String prefix) {
        org.hamcrest.MatcherAssert.assertThat(secret, startsWith(ApiKeys.PREFIX));
        org.hamcrest.MatcherAssert.assertThat(secret, startsWith(prefix));
    }
}

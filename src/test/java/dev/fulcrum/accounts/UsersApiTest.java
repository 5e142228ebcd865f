package dev.fulcrum.accounts;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static dev.fulcrum.support.Management.asAdmin;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class UsersApiTest {

    @Inject
    Fixtures fixtures;

    @Test
    void meIsTheUserTheKeyBelongsTo() {
        Account alice = fixtures.user("alice");
        as(alice).when().get("/api/v1/users/me").then().statusCode(200).body("username", equalTo(alice.name()))
                .body("entity", equalTo(alice.name())).body("admin", equalTo(false)).body("email", nullValue())
                .body("created_at", notNullValue());
        asAdmin().when().get("/api/v1/users/me").then().statusCode(200).body("username", equalTo("admin")).body("admin",
                equalTo(true));
    }

    @Test
    void missingOrUnknownKeysAreUnauthorized() {
        anonymous().when().get("/api/v1/users/me").then().statusCode(401).contentType(PROBLEM_JSON)
                .header("WWW-Authenticate", startsWith("Bearer")).body("status", equalTo(401));
        as("fk_not-a-key").when().get("/api/v1/users/me").then().statusCode(401).contentType(PROBLEM_JSON);
        anonymous().when().get("/api/v1/users").then().statusCode(401);
        anonymous().body(Map.of("username", "nobody")).when().post("/api/v1/users").then().statusCode(401);
        anonymous().when().get("/api/v1/users/admin").then().statusCode(401);
    }

    @Test
    void serverAdministratorsCreateListAndReadUsers() {
        String name = Fixtures.unique("bob");
        asAdmin().body(Map.of("username", name, "email", "bob@example.com")).when().post("/api/v1/users").then()
                .statusCode(201).body("username", equalTo(name)).body("entity", equalTo(name))
                .body("email", equalTo("bob@example.com")).body("admin", equalTo(false))
                .body("created_at", notNullValue());
        asAdmin().when().get("/api/v1/users").then().statusCode(200).body("username", hasItem(name)).body("username",
                hasItem("admin"));
        asAdmin().when().get("/api/v1/users/" + name).then().statusCode(200).body("username", equalTo(name));

        String root = Fixtures.unique("root");
        asAdmin().body(Map.of("username", root, "admin", true)).when().post("/api/v1/users").then().statusCode(201)
                .body("admin", equalTo(true));
    }

    @Test
    void onlyServerAdministratorsCreateOrListUsers() {
        Account carol = fixtures.user("carol");
        as(carol).body(Map.of("username", Fixtures.unique("mallory"))).when().post("/api/v1/users").then()
                .statusCode(403).contentType(PROBLEM_JSON).body("status", equalTo(403));
        as(carol).when().get("/api/v1/users").then().statusCode(403);
    }

    @Test
    void usersReadThemselvesButNotOthers() {
        Account dave = fixtures.user("dave");
        Account erin = fixtures.user("erin");
        as(dave).when().get("/api/v1/users/" + dave.name()).then().statusCode(200).body("username",
                equalTo(dave.name()));
        as(dave).when().get("/api/v1/users/" + erin.name()).then().statusCode(403);
        as(dave).when().get("/api/v1/users/no-such-user").then().statusCode(403);
        asAdmin().when().get("/api/v1/users/no-such-user").then().statusCode(404).contentType(PROBLEM_JSON);
    }

    @Test
    void takenNamesConflict() {
        Account frank = fixtures.user("frank");
        asAdmin().body(Map.of("username", frank.name())).when().post("/api/v1/users").then().statusCode(409)
                .contentType(PROBLEM_JSON).body("status", equalTo(409));
        String team = fixtures.team("team", frank).name;
        asAdmin().body(Map.of("username", team)).when().post("/api/v1/users").then().statusCode(409);
    }

    @Test
    void invalidUsersAreRefusedWithTheField() {
        asAdmin().body(Map.of("username", "no spaces")).when().post("/api/v1/users").then().statusCode(422)
                .contentType(PROBLEM_JSON).body("errors[0].field", equalTo("username"));
        asAdmin().body(Map.of("username", "-dash-first")).when().post("/api/v1/users").then().statusCode(422);
        asAdmin().body(Map.of("username", "x".repeat(65))).when().post("/api/v1/users").then().statusCode(422);
        asAdmin().body(Map.of("username", Fixtures.unique("gina"), "email", "not-an-address")).when()
                .post("/api/v1/users").then().statusCode(422).body("errors[0].field", equalTo("email"));
        asAdmin().body(Map.of("email", "a@b.c")).when().post("/api/v1/users").then().statusCode(422);
        asAdmin().body(Map.of("username", 42, "admin", "maybe")).when().post("/api/v1/users").then().statusCode(422);
        asAdmin().body("{\"username\": ").when().post("/api/v1/users").then().statusCode(422).contentType(PROBLEM_JSON);
        asAdmin().when().post("/api/v1/users").then().statusCode(422);
    }
}

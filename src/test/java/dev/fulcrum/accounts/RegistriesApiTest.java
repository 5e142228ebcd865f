package dev.fulcrum.accounts;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static dev.fulcrum.support.Management.asAdmin;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class RegistriesApiTest {

    @Inject
    Fixtures fixtures;

    @Test
    void anyUserCreatesARegistryAndBecomesItsAdmin() {
        Account alice = fixtures.user("alice");
        String name = Fixtures.unique("models");
        as(alice).body(Map.of("name", name, "description", "Production models")).when().post("/api/v1/registries")
                .then().statusCode(201).body("name", equalTo(name)).body("description", equalTo("Production models"))
                .body("role", equalTo("admin")).body("created_at", notNullValue());
        as(alice).when().get("/api/v1/registries").then().statusCode(200).body("name", contains(name));
        as(alice).when().get("/api/v1/registries/" + name).then().statusCode(200).body("role", equalTo("admin"));
        as(alice).when().get("/api/v1/registries/" + name + "/members").then().statusCode(200)
                .body("username", contains(alice.name())).body("[0].role", equalTo("admin"));
        as(alice).when().get("/api/v1/registries/" + name + "/members/" + alice.name()).then().statusCode(200)
                .body("role", equalTo("admin"));
    }

    @Test
    void usersListTheirRegistriesAndServerAdministratorsAll() {
        Account bob = fixtures.user("bob");
        Account carol = fixtures.user("carol");
        String bobs = fixtures.registry("bobs", bob).name;
        String carols = fixtures.registry("carols", carol).name;
        as(bob).when().get("/api/v1/registries").then().statusCode(200).body("name", contains(bobs));
        asAdmin().when().get("/api/v1/registries").then().statusCode(200).body("name", hasItem(bobs))
                .body("name", hasItem(carols)).body("find { it.name == '" + bobs + "' }.role", equalTo("admin"))
                .body("find { it.name == '" + bobs + "' }.description", nullValue());
    }

    @Test
    void registryNamesAreValidatedAndUnique() {
        Account dave = fixtures.user("dave");
        String taken = fixtures.registry("taken", dave).name;
        as(dave).body(Map.of("name", taken)).when().post("/api/v1/registries").then().statusCode(409)
                .contentType(PROBLEM_JSON);
        as(dave).body(Map.of("name", "no spaces please")).when().post("/api/v1/registries").then().statusCode(422)
                .body("errors[0].field", equalTo("name"));
        as(dave).body(Map.of()).when().post("/api/v1/registries").then().statusCode(422);
        as(dave).when().post("/api/v1/registries").then().statusCode(422);
        anonymous().body(Map.of("name", Fixtures.unique("anon"))).when().post("/api/v1/registries").then()
                .statusCode(401);
        as("fk_bad").when().get("/api/v1/registries").then().statusCode(401);
    }

    @Test
    void outsidersAreForbiddenAndUnknownRegistriesNotFound() {
        Account erin = fixtures.user("erin");
        Account frank = fixtures.user("frank");
        String registry = fixtures.registry("closed", erin).name;
        String base = "/api/v1/registries/" + registry;
        as(frank).when().get(base).then().statusCode(403).contentType(PROBLEM_JSON);
        as(frank).when().get(base + "/members").then().statusCode(403);
        as(frank).when().get(base + "/members/" + erin.name()).then().statusCode(403);
        as(frank).body(Map.of("role", "admin")).when().put(base + "/members/" + frank.name()).then().statusCode(403);
        as(frank).when().delete(base + "/members/" + erin.name()).then().statusCode(403);
        as(frank).when().delete(base).then().statusCode(403);
        as(erin).when().get("/api/v1/registries/no-such-registry").then().statusCode(404).contentType(PROBLEM_JSON);
        as(erin).when().delete("/api/v1/registries/no-such-registry").then().statusCode(404);
        as(erin).when().get("/api/v1/registries/no-such-registry/members").then().statusCode(404);
    }

    @Test
    void adminsManageMembersAndTheLastAdminStays() {
        Account gina = fixtures.user("gina");
        Account hank = fixtures.user("hank");
        String base = "/api/v1/registries/" + fixtures.registry("team", gina).name;
        String hanksPath = base + "/members/" + hank.name();
        String ginasPath = base + "/members/" + gina.name();

        as(gina).body(Map.of("role", "viewer")).when().put(hanksPath).then().statusCode(200)
                .body("username", equalTo(hank.name())).body("role", equalTo("viewer"));
        as(hank).when().get(base).then().statusCode(200).body("role", equalTo("viewer"));
        as(hank).body(Map.of("role", "admin")).when().put(hanksPath).then().statusCode(403);
        as(hank).when().delete(base).then().statusCode(403);
        as(gina).body(Map.of("role", "superuser")).when().put(hanksPath).then().statusCode(422).body("errors[0].field",
                equalTo("role"));
        as(gina).body(Map.of("role", "member")).when().put(base + "/members/no-such-user").then().statusCode(404);

        as(gina).when().delete(ginasPath).then().statusCode(409).contentType(PROBLEM_JSON);
        as(gina).body(Map.of("role", "member")).when().put(ginasPath).then().statusCode(409);

        as(gina).body(Map.of("role", "admin")).when().put(hanksPath).then().statusCode(200);
        as(hank).when().delete(ginasPath).then().statusCode(204);
        as(gina).when().get(base).then().statusCode(403);
        as(hank).when().get(ginasPath).then().statusCode(404);
        as(hank).when().get(base + "/members").then().statusCode(200).body("username", contains(hank.name()));
    }

    @Test
    void membersMayLeaveAndAdminsDelete() {
        Account ivan = fixtures.user("ivan");
        Account judy = fixtures.user("judy");
        String name = fixtures.registry("temp", ivan).name;
        String base = "/api/v1/registries/" + name;
        as(ivan).body(Map.of("role", "member")).when().put(base + "/members/" + judy.name()).then().statusCode(200);
        as(judy).when().delete(base + "/members/" + judy.name()).then().statusCode(204);
        as(judy).when().get(base).then().statusCode(403);

        as(ivan).when().delete(base).then().statusCode(204);
        as(ivan).when().get(base).then().statusCode(404);
        as(ivan).when().get("/api/v1/registries").then().statusCode(200).body("name", not(hasItem(name)));
    }
}

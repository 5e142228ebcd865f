package dev.fulcrum.accounts;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class ProjectsApiTest {

    @Inject
    Fixtures fixtures;

    @Test
    void membersCreateProjectsThatViewersRead() {
        Account alice = fixtures.user("alice");
        Account bob = fixtures.user("bob");
        var team = fixtures.team("lab", alice);
        fixtures.member(team, bob, Role.VIEWER);
        String projects = "/api/v1/entities/" + team.name + "/projects";

        as(alice).body(Map.of("name", "vision", "description", "Image models")).when().post(projects).then()
                .statusCode(201).body("entity", equalTo(team.name)).body("name", equalTo("vision"))
                .body("description", equalTo("Image models")).body("created_at", notNullValue());
        as(alice).body(Map.of("name", "audio")).when().post(projects).then().statusCode(201).body("description",
                nullValue());

        as(bob).when().get(projects).then().statusCode(200).body("name", contains("audio", "vision"));
        as(bob).when().get(projects + "/vision").then().statusCode(200).body("description", equalTo("Image models"));
        as(bob).body(Map.of("name", "sneaky")).when().post(projects).then().statusCode(403).contentType(PROBLEM_JSON);
    }

    @Test
    void usersOwnTheProjectsOfTheirPersonalEntity() {
        Account carol = fixtures.user("carol");
        Account dave = fixtures.user("dave");
        String projects = "/api/v1/entities/" + carol.name() + "/projects";
        as(carol).body(Map.of("name", "notes")).when().post(projects).then().statusCode(201);
        as(dave).when().get(projects).then().statusCode(403);
        as(dave).when().get(projects + "/notes").then().statusCode(403);
        as(dave).body(Map.of("name", "intrusion")).when().post(projects).then().statusCode(403);
        as(dave).when().delete(projects + "/notes").then().statusCode(403);
        as(carol).when().delete(projects + "/notes").then().statusCode(204);
    }

    @Test
    void projectNamesAreValidatedAndUniquePerEntity() {
        Account erin = fixtures.user("erin");
        Account frank = fixtures.user("frank");
        String projects = "/api/v1/entities/" + erin.name() + "/projects";
        as(erin).body(Map.of("name", "dup")).when().post(projects).then().statusCode(201);
        as(erin).body(Map.of("name", "dup")).when().post(projects).then().statusCode(409).contentType(PROBLEM_JSON);
        as(frank).body(Map.of("name", "dup")).when().post("/api/v1/entities/" + frank.name() + "/projects").then()
                .statusCode(201);
        as(erin).body(Map.of("name", "bad/name")).when().post(projects).then().statusCode(422).contentType(PROBLEM_JSON)
                .body("errors[0].field", equalTo("name"));
        as(erin).body(Map.of("name", "p".repeat(129))).when().post(projects).then().statusCode(422);
        as(erin).body(Map.of("description", "no name")).when().post(projects).then().statusCode(422);
        as(erin).when().post(projects).then().statusCode(422);
    }

    @Test
    void unknownEntitiesAndProjectsAreNotFound() {
        Account gina = fixtures.user("gina");
        as(gina).when().get("/api/v1/entities/no-such-entity/projects").then().statusCode(404)
                .contentType(PROBLEM_JSON);
        as(gina).body(Map.of("name", "x")).when().post("/api/v1/entities/no-such-entity/projects").then()
                .statusCode(404);
        as(gina).when().get("/api/v1/entities/" + gina.name() + "/projects/missing").then().statusCode(404);
        as(gina).when().delete("/api/v1/entities/" + gina.name() + "/projects/missing").then().statusCode(404);
        anonymous().when().get("/api/v1/entities/" + gina.name() + "/projects").then().statusCode(401);
        as("fk_bad").when().delete("/api/v1/entities/" + gina.name() + "/projects/missing").then().statusCode(401);
    }

    @Test
    void onlyAdminsDeleteAndDeletionTakesTheDatasetsAlong() {
        Account hank = fixtures.user("hank");
        Account ivan = fixtures.user("ivan");
        var team = fixtures.team("cascade", hank);
        fixtures.member(team, ivan, Role.MEMBER);
        String project = "/api/v1/entities/" + team.name + "/projects/data";
        as(ivan).body(Map.of("name", "data")).when().post("/api/v1/entities/" + team.name + "/projects").then()
                .statusCode(201);
        given().filter(Contract.DATASETS).auth().oauth2(ivan.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "qa", "rows", List.of(Map.of("q", "1")))).when()
                .post("/v2/" + team.name + "/data/datasets").then().statusCode(200);

        as(ivan).when().delete(project).then().statusCode(403);
        as(hank).when().delete(project).then().statusCode(204);
        as(hank).when().get(project).then().statusCode(404);

        as(hank).body(Map.of("name", "data")).when().post("/api/v1/entities/" + team.name + "/projects").then()
                .statusCode(201);
        given().filter(Contract.DATASETS).auth().oauth2(hank.key()).when()
                .get("/v2/" + team.name + "/data/datasets/qa/versions/latest").then().statusCode(404);
        as(hank).when().get("/api/v1/entities/" + team.name + "/projects").then().statusCode(200).body("name",
                contains("data"));
        as(hank).when().get("/api/v1/entities/" + hank.name() + "/projects").then().statusCode(200).body("$", empty());
    }
}

package dev.fulcrum.accounts;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static dev.fulcrum.support.Management.asAdmin;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class TeamsApiTest {

    @Inject
    Fixtures fixtures;

    @Test
    void theCreatorOfATeamIsItsAdmin() {
        Account alice = fixtures.user("alice");
        String team = Fixtures.unique("vision");
        as(alice).body(Map.of("name", team)).when().post("/api/v1/teams").then().statusCode(201)
                .body("name", equalTo(team)).body("role", equalTo("admin")).body("created_at", notNullValue());
        as(alice).when().get("/api/v1/teams").then().statusCode(200).body("name", contains(team)).body("[0].role",
                equalTo("admin"));
        as(alice).when().get("/api/v1/teams/" + team).then().statusCode(200).body("role", equalTo("admin"));
        as(alice).when().get("/api/v1/teams/" + team + "/members").then().statusCode(200).body("$", hasSize(1))
                .body("[0].username", equalTo(alice.name())).body("[0].role", equalTo("admin"))
                .body("[0].created_at", notNullValue());
        as(alice).when().get("/api/v1/teams/" + team + "/members/" + alice.name()).then().statusCode(200).body("role",
                equalTo("admin"));
    }

    @Test
    void usersListTheirTeamsAndServerAdministratorsAll() {
        Account bob = fixtures.user("bob");
        Account carol = fixtures.user("carol");
        String bobs = fixtures.team("bobs", bob).name;
        String carols = fixtures.team("carols", carol).name;
        fixtures.member(fixtures.team("shared", carol), bob, Role.VIEWER);

        as(bob).when().get("/api/v1/teams").then().statusCode(200).body("$", hasSize(2)).body("name", hasItem(bobs))
                .body("name", not(hasItem(carols)))
                .body("find { it.name.startsWith('shared') }.role", equalTo("viewer"));
        asAdmin().when().get("/api/v1/teams").then().statusCode(200).body("name", hasItem(bobs))
                .body("name", hasItem(carols)).body("find { it.name == '" + carols + "' }.role", equalTo("admin"));
        asAdmin().when().get("/api/v1/teams/" + carols).then().statusCode(200).body("role", equalTo("admin"));
    }

    @Test
    void teamNamesAreValidatedAndUnique() {
        Account dave = fixtures.user("dave");
        String team = fixtures.team("taken", dave).name;
        as(dave).body(Map.of("name", team)).when().post("/api/v1/teams").then().statusCode(409)
                .contentType(PROBLEM_JSON);
        as(dave).body(Map.of("name", dave.name())).when().post("/api/v1/teams").then().statusCode(409);
        as(dave).body(Map.of("name", "white space")).when().post("/api/v1/teams").then().statusCode(422)
                .contentType(PROBLEM_JSON).body("errors[0].field", equalTo("name"));
        as(dave).body(Map.of()).when().post("/api/v1/teams").then().statusCode(422);
        as(dave).body("[1, 2").when().post("/api/v1/teams").then().statusCode(422).contentType(PROBLEM_JSON);
        anonymous().body(Map.of("name", Fixtures.unique("anon"))).when().post("/api/v1/teams").then().statusCode(401);
        as("fk_bad").when().get("/api/v1/teams").then().statusCode(401);
    }

    @Test
    void outsidersAreForbiddenAndUnknownOrPersonalEntitiesAreNotFound() {
        Account erin = fixtures.user("erin");
        Account frank = fixtures.user("frank");
        String team = fixtures.team("private", erin).name;
        as(frank).when().get("/api/v1/teams/" + team).then().statusCode(403).contentType(PROBLEM_JSON);
        as(frank).when().get("/api/v1/teams/" + team + "/members").then().statusCode(403);
        as(frank).when().get("/api/v1/teams/" + team + "/members/" + erin.name()).then().statusCode(403);
        as(frank).body(Map.of("role", "admin")).when().put("/api/v1/teams/" + team + "/members/" + frank.name()).then()
                .statusCode(403);
        as(frank).when().delete("/api/v1/teams/" + team).then().statusCode(403);

        as(erin).when().get("/api/v1/teams/no-such-team").then().statusCode(404).contentType(PROBLEM_JSON);
        as(erin).when().delete("/api/v1/teams/no-such-team").then().statusCode(404);
        as(erin).when().get("/api/v1/teams/" + erin.name()).then().statusCode(404);
        as(erin).when().get("/api/v1/teams/" + erin.name() + "/members").then().statusCode(404);
        as(erin).body(Map.of("role", "member")).when().put("/api/v1/teams/" + erin.name() + "/members/" + frank.name())
                .then().statusCode(404);
        as(erin).when().delete("/api/v1/teams/" + erin.name()).then().statusCode(404);
    }

    @Test
    void adminsAddMembersAndChangeTheirRoles() {
        Account gina = fixtures.user("gina");
        Account hank = fixtures.user("hank");
        String team = fixtures.team("growing", gina).name;
        String hanksPath = "/api/v1/teams/" + team + "/members/" + hank.name();

        as(gina).body(Map.of("role", "viewer")).when().put(hanksPath).then().statusCode(200)
                .body("username", equalTo(hank.name())).body("role", equalTo("viewer"))
                .body("created_at", notNullValue());
        as(hank).when().get("/api/v1/teams/" + team).then().statusCode(200).body("role", equalTo("viewer"));
        as(hank).body(Map.of("role", "admin")).when().put(hanksPath).then().statusCode(403);
        as(hank).when().delete("/api/v1/teams/" + team).then().statusCode(403);

        as(gina).body(Map.of("role", "member")).when().put(hanksPath).then().statusCode(200).body("role",
                equalTo("member"));
        as(hank).when().get(hanksPath).then().statusCode(200).body("role", equalTo("member"));
        as(hank).when().delete("/api/v1/teams/" + team + "/members/" + gina.name()).then().statusCode(403);
        as(gina).when().get("/api/v1/teams/" + team + "/members").then().statusCode(200).body("username",
                contains(sorted(gina.name(), hank.name())));
    }

    @Test
    void memberChangesAreValidated() {
        Account ivan = fixtures.user("ivan");
        Account judy = fixtures.user("judy");
        String team = fixtures.team("strict", ivan).name;
        String judysPath = "/api/v1/teams/" + team + "/members/" + judy.name();
        as(ivan).body(Map.of("role", "owner")).when().put(judysPath).then().statusCode(422).contentType(PROBLEM_JSON)
                .body("errors[0].field", equalTo("role"));
        as(ivan).body(Map.of()).when().put(judysPath).then().statusCode(422).body("errors[0].field", equalTo("role"));
        as(ivan).body("{\"role\": null}").when().put(judysPath).then().statusCode(422);
        as(ivan).when().put(judysPath).then().statusCode(422);
        as(ivan).body(Map.of("role", "member")).when().put("/api/v1/teams/" + team + "/members/no-such-user").then()
                .statusCode(404);
        as(ivan).when().get(judysPath).then().statusCode(404);
        as(ivan).when().delete(judysPath).then().statusCode(404);
    }

    @Test
    void theLastAdminCanNeitherLeaveNorBeDemoted() {
        Account kate = fixtures.user("kate");
        Account liam = fixtures.user("liam");
        String team = fixtures.team("guarded", kate).name;
        String katesPath = "/api/v1/teams/" + team + "/members/" + kate.name();

        as(kate).when().delete(katesPath).then().statusCode(409).contentType(PROBLEM_JSON);
        as(kate).body(Map.of("role", "member")).when().put(katesPath).then().statusCode(409);
        asAdmin().when().delete(katesPath).then().statusCode(409);

        as(kate).body(Map.of("role", "admin")).when().put("/api/v1/teams/" + team + "/members/" + liam.name()).then()
                .statusCode(200);
        as(kate).body(Map.of("role", "viewer")).when().put(katesPath).then().statusCode(200);
        as(liam).when().delete(katesPath).then().statusCode(204);
        as(kate).when().get("/api/v1/teams/" + team).then().statusCode(403);
        as(liam).when().delete("/api/v1/teams/" + team + "/members/" + liam.name()).then().statusCode(409);
    }

    @Test
    void membersMayLeave() {
        Account mia = fixtures.user("mia");
        Account noah = fixtures.user("noah");
        var team = fixtures.team("open", mia);
        fixtures.member(team, noah, Role.VIEWER);
        as(noah).when().delete("/api/v1/teams/" + team.name + "/members/" + noah.name()).then().statusCode(204);
        as(noah).when().get("/api/v1/teams/" + team.name).then().statusCode(403);
        as(mia).when().get("/api/v1/teams/" + team.name + "/members").then().statusCode(200).body("username",
                contains(mia.name()));
    }

    @Test
    void aTeamIsDeletedOnlyWithoutProjects() {
        Account olga = fixtures.user("olga");
        String team = fixtures.team("shortlived", olga).name;
        as(olga).body(Map.of("name", "work")).when().post("/api/v1/entities/" + team + "/projects").then()
                .statusCode(201);

        as(olga).when().delete("/api/v1/teams/" + team).then().statusCode(409).contentType(PROBLEM_JSON);
        as(olga).when().delete("/api/v1/entities/" + team + "/projects/work").then().statusCode(204);
        as(olga).when().delete("/api/v1/teams/" + team).then().statusCode(204);

        as(olga).when().get("/api/v1/teams/" + team).then().statusCode(404);
        as(olga).when().get("/api/v1/teams").then().statusCode(200).body("name", not(hasItem(team)));
    }

    @Test
    void concurrentCreationsOfOneNameGiveOneTeamAndConflicts() throws Exception {
        Account pete = fixtures.user("pete");
        String team = Fixtures.unique("race");
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(pool.submit(() -> as(pete).body(Map.of("name", team)).when().post("/api/v1/teams").then()
                        .extract().statusCode()));
            }
            List<Integer> results = new ArrayList<>();
            for (Future<Integer> status : statuses) {
                results.add(status.get(60, TimeUnit.SECONDS));
            }
            assertEquals(1, results.stream().filter(s -> s == 201).count(), results.toString());
            assertEquals(5, results.stream().filter(s -> s == 409).count(), results.toString());
        } finally {
            pool.shutdownNow();
        }
    }

    private static String[] sorted(String... names) {
        java.util.Arrays.sort(names);
        return names;
    }
}

package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.asBasic;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Each datasets endpoint against each kind of caller, with Bearer and with Basic credentials: anonymous, bad key,
 * revoked key, another team's member, viewer, member, team admin, server admin.
 */
@QuarkusTest
class DatasetAuthorizationTest {

    @Inject
    Fixtures fixtures;

    @Inject
    ApiKeys apiKeys;

    private String team;
    private String table;
    private final Map<String, Caller> callers = new java.util.LinkedHashMap<>();

    /** How a caller authenticates; null key: none. */
    record Caller(String key, int read, int write) {
    }

    @BeforeEach
    void team() {
        Account admin = fixtures.user("team-admin");
        PlatformEntity entity = fixtures.team("lab", admin);
        team = entity.name;
        Account viewer = fixtures.user("viewer");
        Account member = fixtures.user("member");
        Account outsider = fixtures.user("outsider");
        Account revoked = fixtures.user("revoked");
        fixtures.member(entity, viewer, Role.VIEWER);
        fixtures.member(entity, member, Role.MEMBER);
        fixtures.member(entity, revoked, Role.ADMIN);
        apiKeys.revoke(revoked.user().id, apiKeys.list(revoked.user().id).get(0).id);
        PlatformEntity otherTeam = fixtures.team("other", outsider);
        fixtures.member(otherTeam, member, Role.ADMIN);

        DatasetsClient.create(admin.key(), team + "/shared", "set", rows(3, "t")).then().statusCode(200);
        String ref = as(admin.key()).get("/v2/" + team + "/shared/datasets/set/versions/latest").then().statusCode(200)
                .extract().path("rows");
        table = ref.substring(ref.lastIndexOf('/') + 1);

        callers.clear();
        callers.put("anonymous", new Caller(null, 401, 401));
        callers.put("bad key", new Caller("fk_not-a-real-key", 401, 401));
        callers.put("revoked key", new Caller(revoked.key(), 401, 401));
        callers.put("other team's member", new Caller(outsider.key(), 403, 403));
        callers.put("viewer", new Caller(viewer.key(), 200, 403));
        callers.put("member", new Caller(member.key(), 200, 200));
        callers.put("team admin", new Caller(admin.key(), 200, 200));
        callers.put("server admin", new Caller(EmbeddedPostgresResource.ADMIN_KEY, 200, 200));
    }

    private List<String> failures(Function<String, RequestSpecification> scheme) {
        List<String> failures = new ArrayList<>();
        callers.forEach((who, caller) -> {
            String project = "/v2/" + team + "/shared";
            check(failures, who + " read", caller.read(),
                    spec(scheme, caller).get(project + "/datasets/set/versions/latest").statusCode());
            check(failures, who + " list", caller.read(), spec(scheme, caller).get(project + "/datasets").statusCode());
            check(failures, who + " rows", caller.read(),
                    spec(scheme, caller).get(project + "/tables/" + table + "/rows").statusCode());
            check(failures, who + " query", caller.read(), spec(scheme, caller).contentType(ContentType.JSON)
                    .body(Map.of("project_id", team + "/shared", "digest", table)).post("/table/query").statusCode());
            check(failures, who + " create", caller.write(),
                    spec(scheme, caller).contentType(ContentType.JSON)
                            .body(Map.of("name", "by " + who.replace("'", ""), "rows", rows(1, who)))
                            .post(project + "/datasets").statusCode());
            int delete = spec(scheme, caller).delete(project + "/datasets/nothing-here").statusCode();
            check(failures, who + " delete", caller.write() == 200 ? 404 : caller.write(), delete);
        });
        return failures;
    }

    private static RequestSpecification spec(Function<String, RequestSpecification> scheme, Caller caller) {
        return caller.key() == null ? given().filter(Contract.DATASETS) : scheme.apply(caller.key());
    }

    private static void check(List<String> failures, String what, int expected, int actual) {
        if (expected != actual) {
            failures.add(what + ": expected " + expected + ", got " + actual);
        }
    }

    @Test
    void bearerMatrix() {
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), failures(DatasetsClient::as));
    }

    @Test
    void basicMatrix() {
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), failures(DatasetsClient::asBasic));
    }

    @Test
    void unauthenticatedAnswersNameTheSchemes() {
        given().filter(Contract.DATASETS).get("/v2/" + team + "/shared/datasets/set/versions/latest").then()
                .statusCode(401).body("detail", org.hamcrest.Matchers.containsString("credentials"));
        var headers = given().get("/v2/" + team + "/shared/datasets/set/versions/latest").headers()
                .getValues("WWW-Authenticate");
        org.hamcrest.MatcherAssert.assertThat(headers, hasItem(startsWith("Basic")));
        org.hamcrest.MatcherAssert.assertThat(headers, hasItem(startsWith("Bearer")));
        given().auth().preemptive().basic("api", "").get("/v2/" + team + "/shared/datasets").then().statusCode(401);
        given().header("Authorization", "Basic %%%").get("/v2/" + team + "/shared/datasets").then().statusCode(401);
        given().header("Authorization", "Token abc").get("/v2/" + team + "/shared/datasets").then().statusCode(401);
    }

    @Test
    void aViewerCannotCreateAProjectByWriting() {
        Caller viewer = callers.get("viewer");
        asBasic(viewer.key()).contentType(ContentType.JSON).body(Map.of("rows", rows(1, "v")))
                .post("/v2/" + team + "/new-project/datasets").then().statusCode(403);
        as(viewer.key()).get("/v2/" + team + "/new-project/datasets").then().statusCode(404);
    }
}

package dev.fulcrum.console;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Who reads the training screens: whoever the training API lets read the project (its viewers too, without the delete
 * and cancel forms); others get the API's 403, on the page and from the job page's events.json.
 */
@QuarkusTest
class ConsoleTrainingPagesTest {

    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");

    @Inject
    Fixtures fixtures;

    private Account member;
    private Account viewer;
    private Account outsider;
    private String team;
    private String model;
    private String job;

    @BeforeEach
    void project() {
        Account admin = fixtures.user("admin");
        member = fixtures.user("member");
        viewer = fixtures.user("viewer");
        outsider = fixtures.user("outsider");
        PlatformEntity entity = fixtures.team("lab", admin);
        fixtures.member(entity, member, Role.MEMBER);
        fixtures.member(entity, viewer, Role.VIEWER);
        team = entity.name;
        model = api(member)
                .body(Map.of("entity", team, "project", "agents", "name", "tuned", "base_model", "fulcrum-tiny"))
                .post("/v1/preview/models").then().statusCode(201).extract().path("id");
        // an SFT job of the built-in model (queued, running or done by the time the pages are read)
        String digest = given().filter(Contract.DATASETS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "chats", "rows",
                        List.of(Map.of("messages",
                                List.of(Map.of("role", "user", "content", "hi"),
                                        Map.of("role", "assistant", "content", "hello"))))))
                .post("/v2/" + team + "/agents/datasets").then().statusCode(200).extract().path("digest");
        job = api(member)
                .body(Map.of("model_id", model, "training_data_url",
                        "weave:///" + team + "/agents/object/chats:" + digest))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
    }

    private static RequestSpecification api(Account account) {
        return given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(account.key());
    }

    private static String signIn(Account account) {
        return given().contentType(ContentType.URLENC).formParam("api_key", account.key()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
    }

    private static RequestSpecification as(String cookie) {
        return given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false);
    }

    private String training() {
        return "/console/projects/" + team + "/agents/training";
    }

    @Test
    void viewersReadEverythingWithoutTheForms() {
        String cookie = signIn(viewer);
        as(cookie).get(training()).then().statusCode(200).header("Cache-Control", "no-store")
                .body(containsString("tuned")).body(containsString(training() + "/models/" + model));
        as(cookie).get(training() + "/models/" + model).then().statusCode(200).body(containsString(job))
                .body(not(containsString("class=\"cancel\""))).body(not(containsString("/delete\"")));
        as(cookie).get(training() + "/jobs/" + job).then().statusCode(200).body(containsString("id=\"loss-chart\""))
                .body(containsString("/webjars/uplot/1.6.30/dist/uPlot.iife.min.js"));
        as(cookie).get(training() + "/jobs/" + job + "/events.json").then().statusCode(200)
                .header("Cache-Control", "no-store").contentType(ContentType.JSON)
                .body("status", org.hamcrest.Matchers.notNullValue());
    }

    @Test
    void membersSeeTheCancelFormAndAViewersPostIsTheApis403() {
        String memberCookie = signIn(member);
        String page = as(memberCookie).get(training() + "/models/" + model).then().statusCode(200).extract().asString();
        boolean cancellable = page.contains("class=\"cancel\"");
        String viewerCookie = signIn(viewer);
        String viewerPage = as(viewerCookie).get(training() + "/jobs/" + job).then().statusCode(200).extract()
                .asString();
        Matcher token = CSRF.matcher(viewerPage);
        assertTrue(token.find(), "the page carries the session's token (the sign-out form)");
        as(viewerCookie).contentType(ContentType.URLENC).header("Origin", "http://localhost:" + RestAssured.port)
                .formParam("_csrf", token.group(1)).post(training() + "/jobs/" + job + "/cancel").then()
                .statusCode(403);
        // the member may cancel while the job waits or runs (it may already be over: then the form is gone)
        if (cancellable) {
            Matcher memberToken = CSRF.matcher(page);
            assertTrue(memberToken.find());
            as(memberCookie).contentType(ContentType.URLENC).header("Origin", "http://localhost:" + RestAssured.port)
                    .formParam("_csrf", memberToken.group(1)).post(training() + "/jobs/" + job + "/cancel").then()
                    .statusCode(org.hamcrest.Matchers.oneOf(303, 409));
        }
    }

    @Test
    void othersGetTheApis403AndAModelOfAnotherProjectIs404() {
        String cookie = signIn(outsider);
        as(cookie).get(training() + "/models/" + model).then().statusCode(403);
        as(cookie).get(training() + "/jobs/" + job).then().statusCode(403);
        as(cookie).get(training() + "/jobs/" + job + "/events.json").then().statusCode(403)
                .contentType(ContentType.JSON).body("detail", org.hamcrest.Matchers.notNullValue());
        String member = signIn(this.member);
        as(member).get("/console/projects/" + team + "/elsewhere/training/models/" + model).then().statusCode(404);
        as(member).get("/console/projects/" + team + "/elsewhere/training/jobs/" + job + "/events.json").then()
                .statusCode(404);
        given().redirects().follow(false).get(training() + "/jobs/" + job + "/events.json").then().statusCode(303)
                .header("Location", containsString("/console/sign-in"));
    }

    @Test
    void thePlaygroundListsTheModelsAndTakesACheckpointReference() {
        String cookie = signIn(viewer);
        String reference = "wandb-artifact:///" + team + "/agents/tuned:step0";
        as(cookie).queryParam("model", reference).queryParam("project", team + "/agents").get("/console/playground")
                .then().statusCode(200).body(containsString("<option value=\"fulcrum-tiny\""))
                // the local embedding model does not chat: not offered
                .body(not(containsString("<option value=\"all-minilm-l6-v2\"")))
                .body(containsString("value=\"" + reference + "\""))
                .body(containsString("value=\"" + team + "/agents\""))
                .body(containsString("/console/assets/playground.js"));
        List<String> nav = List
                .of(as(cookie).get("/console/").then().statusCode(200).extract().asString().split("<a href="));
        org.hamcrest.MatcherAssert.assertThat(nav, hasItem(containsString("/console/playground")));
        given().redirects().follow(false).get("/console/playground").then().statusCode(303);
    }
}

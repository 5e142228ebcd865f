package dev.fulcrum.console;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;

/**
 * Query values a page cannot take are the API's 422 shown on the page, never a 500 (issue 23): negative offsets, dates
 * beyond the years a date field offers, more chart metrics than a chart draws. The training screen answers an outsider
 * and a missing project as every project screen does, and a file download is kept out of the browser's cache.
 */
@QuarkusTest
class ConsoleRefusalsTest extends LabTest {

    private String project;
    private String registry;

    @BeforeEach
    void world() {
        project = "/console/projects/" + team.name + "/vision";
        String api = "/api/v1/entities/" + team.name + "/projects/vision";
        given().filter(Contract.RUNS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "r1")).post(api + "/runs").then().statusCode(201);
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "empty.txt", new byte[0], "text/plain").multiPart("type", "model")
                .post(api + "/artifacts/collections/weights/versions").then().statusCode(201);
        Registry linked = fixtures.registry("models", admin);
        fixtures.registryMember(linked, member, Role.MEMBER);
        registry = linked.name;
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("registry", registry, "collection", "weights"))
                .post(api + "/artifacts/collections/weights/versions/v0/links").then().statusCode(201);
    }

    private static String signIn(dev.fulcrum.support.Fixtures.Account account) {
        return given().contentType(ContentType.URLENC).formParam("api_key", account.key()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
    }

    private static RequestSpecification as(String cookie) {
        return given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false);
    }

    @Test
    void negativeOffsetsAreA422OnThePage() {
        String cookie = signIn(viewer);
        as(cookie).get(project + "/runs?offset=-1").then().statusCode(422).contentType(ContentType.HTML)
                .body(containsString("Must be 0 or more"));
        as(cookie).get(project + "/artifacts/weights?offset=-5").then().statusCode(422).contentType(ContentType.HTML)
                .body(containsString("0 or more"));
        as(signIn(member)).get("/console/registries/" + registry + "/artifacts/weights?offset=-1").then()
                .statusCode(422).contentType(ContentType.HTML).body(containsString("0 or more"));
        as(cookie).queryParam("name", "((a{1000}){1000}){1000}").get(project + "/runs").then().statusCode(422)
                .body(containsString("5000 RE2 instructions"));
    }

    @Test
    void valuesRefusedBeforeThePageRunsAreShownOnAPageToo() {
        String cookie = signIn(viewer);
        // no number, a NUL character: refused before the page's code runs, and still a page with the API's status
        as(cookie).get(project + "/runs?offset=many").then().statusCode(422).contentType(ContentType.HTML)
                .body(containsString("offset"));
        as(cookie).get(project + "/runs?offset=1%00").then().statusCode(422).contentType(ContentType.HTML);
        // an operation the page calls refuses the value (a bean validation constraint of the API): a page as well
        as(signIn(member)).queryParam("entity", "not a name").get("/console/usage").then().statusCode(422)
                .contentType(ContentType.HTML).body(containsString("letters, digits"));
    }

    @Test
    void aFormFieldThatCannotBeStoredIsRefusedOnAPage() {
        String cookie = signIn(member);
        String page = as(cookie).get("/console/account").then().statusCode(200).extract().asString();
        java.util.regex.Matcher token = java.util.regex.Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"")
                .matcher(page);
        org.junit.jupiter.api.Assertions.assertTrue(token.find());
        // as a browser sends it: percent-encoded UTF-8
        as(cookie).contentType("application/x-www-form-urlencoded; charset=UTF-8")
                .body("_csrf=" + token.group(1) + "&entity=" + team.name + "&name=formnul&description=a%00b")
                .post("/console/projects").then().statusCode(422).contentType(ContentType.HTML)
                .body(containsString("description"));
    }

    @Test
    void aDateBeyondTheYear9999IsA422OnTheUsagePage() {
        String cookie = signIn(member);
        for (String to : new String[] { "+999999999-12-31", "-999999999-01-01", "0000-01-01" }) {
            as(cookie).queryParam("entity", team.name).queryParam("to", to).get("/console/usage").then().statusCode(422)
                    .contentType(ContentType.HTML).body(containsString("Choose a date from"));
        }
        given().filter(Contract.INFERENCE).auth().oauth2(member.key()).queryParam("entity", team.name)
                .queryParam("to", "+999999999-12-31T00:00:00Z").get("/api/v1/usage").then().statusCode(422)
                .body("errors[0].field", equalTo("to"));
    }

    @Test
    void aChartTakesAtMostAHundredMetricsAndOnlyThoseLoggedGetAColumn() {
        String cookie = signIn(viewer);
        String history = project + "/runs/r1/history.json";
        // the same key many times is one metric
        as(cookie).queryParam("keys", String.join(",", Collections.nCopies(500, "loss"))).get(history).then()
                .statusCode(200);
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i <= HistoryColumns.MAX_KEYS; i++) {
            keys.append("metric").append(i).append(',');
        }
        as(cookie).queryParam("keys", keys.toString()).get(history).then().statusCode(422).contentType(ContentType.JSON)
                .header("Cache-Control", "no-store").body("error", equalTo("Choose at most 100 metrics"));
        given().filter(Contract.RUNS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(java.util.List.of(Map.of("_step", 0, "loss", 1.5), Map.of("_step", 1, "loss", 1)))
                .post("/api/v1/entities/" + team.name + "/projects/vision/runs/r1/history").then().statusCode(200);
        as(cookie).queryParam("keys", "loss,never-logged").get(history).then().statusCode(200).body("rows", equalTo(2))
                .body("series.name", equalTo(java.util.List.of("loss")));
    }

    @Test
    void theTrainingScreenIsTheApis403ForAnOutsiderAnd404ForNoProject() {
        as(signIn(outsider)).get(project + "/training").then().statusCode(403).contentType(ContentType.HTML);
        as(signIn(member)).get("/console/projects/" + team.name + "/nothing-here/training").then().statusCode(404);
        as(signIn(viewer)).get(project + "/training").then().statusCode(200);
    }

    @Test
    void aFileDownloadIsNotKeptInTheBrowsersCache() {
        String cookie = signIn(viewer);
        as(cookie).queryParam("path", "empty.txt").get(project + "/artifacts/weights/versions/v0/files").then()
                .statusCode(200).header("Cache-Control", "private, no-store");
        as(cookie).queryParam("path", "empty.txt").header("Range", "bytes=-5")
                .get(project + "/artifacts/weights/versions/v0/files").then().statusCode(416)
                .header("Content-Range", "bytes */0").header("Cache-Control", "private, no-store");
        byte[] none = as(signIn(member)).queryParam("path", "empty.txt")
                .get("/console/registries/" + registry + "/artifacts/weights/versions/v0/files").then().statusCode(200)
                .header("Cache-Control", "private, no-store").extract().asByteArray();
        org.junit.jupiter.api.Assertions.assertEquals("", new String(none, StandardCharsets.UTF_8));
    }
}

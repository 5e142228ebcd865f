package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

/**
 * Input PostgreSQL or the contracts cannot take is refused before it reaches a service, in the shape of the interface
 * that was called: the NUL character in stored strings and parameters, JSON nested deeper than
 * {@link dev.fulcrum.platform.json.JsonInput#MAX_NESTING_DEPTH}, numbers or booleans where a string belongs, and
 * over-long request lines.
 */
@QuarkusTest
class RefusedInputTest extends LabTest {

    /** {@code JsonInput.MAX_NESTING_DEPTH}. */
    private static final int MAX_DEPTH = 200;

    private String datasets;
    private String runs;

    @BeforeEach
    void paths() {
        datasets = "/v2/" + member.name() + "/nul/datasets";
        runs = "/api/v1/entities/" + member.name() + "/projects/nul/runs";
    }

    private RequestSpecification as(io.restassured.filter.Filter contract) {
        return as(contract, member);
    }

    private static RequestSpecification as(io.restassured.filter.Filter contract, Account account) {
        return given().filter(contract).auth().oauth2(account.key()).contentType(ContentType.JSON);
    }

    private static String nested(int depth) {
        return "[".repeat(depth) + "]".repeat(depth);
    }

    @Test
    void aNulInADatasetFieldIsA422NamingTheField() {
        as(Contract.DATASETS).body("{\"name\": \"x\", \"description\": \"d\\u0000\", \"rows\": [{\"a\": 1}]}")
                .post(datasets).then().statusCode(422).body("detail", hasSize(1))
                .body("detail[0].loc", contains("body", "description")).body("detail[0].type", equalTo("string_nul"))
                .body("detail[0].msg", containsString("NUL"));
        as(Contract.DATASETS).body("{\"name\": \"x\\u0000\", \"rows\": []}").post(datasets).then().statusCode(422)
                .body("detail[0].loc", contains("body", "name"));
        as(Contract.DATASETS).get(datasets).then().statusCode(404); // not even the project was created
    }

    @Test
    void aDatasetRowMayHoldANulAndGivesItBackWithWeavesDigest() {
        String digest = as(Contract.DATASETS).body("{\"name\": \"nul\", \"rows\": [{\"a\": \"x\\u0000y\"}]}")
                .post(datasets).then().statusCode(200).extract().path("digest");
        String table = as(Contract.DATASETS).get(datasets + "/nul/versions/" + digest).then().statusCode(200).extract()
                .path("rows");
        String tableDigest = table.substring(table.lastIndexOf('/') + 1);
        as(Contract.DATASETS).get("/v2/" + member.name() + "/nul/tables/" + tableDigest + "/rows").then()
                // the row digest Weave computes: Python's json.dumps({"a": "x\u0000y"}, sort_keys=True) escapes it
                .statusCode(200).body(containsString("\"val\":{\"a\": \"x\\u0000y\"}"))
                .body(containsString("\"digest\":\"hDpuUgMkyesnGgfx22FRasVrFLaNL0sNPDOHMTmdGjY\""));
    }

    @Test
    void aNulInManagementBodiesIsAProblemNamingTheField() {
        as(Contract.RUNS).body("{\"name\": \"r1\", \"config\": {\"lr\": \"0.1\\u0000\"}}").post(runs).then()
                .statusCode(422).contentType("application/problem+json").body("status", equalTo(422))
                .body("errors[0].field", equalTo("config.lr"));
        as(Contract.RUNS).body("{\"name\": \"r1\", \"config\": {\"k\\u0000\": 1}}").post(runs).then().statusCode(422)
                .body("errors[0].field", equalTo("config.k\u0000"));
        as(Contract.RUNS).body("{\"name\": \"r1\", \"config\": {\"deep\": [1, {\"x\": \"\\u0000\"}]}}").post(runs)
                .then().statusCode(422).body("errors[0].field", equalTo("config.deep[1].x"));
        as(Contract.RUNS).body(Map.of("name", "r1")).post(runs).then().statusCode(201);
        as(Contract.RUNS).body("[{\"loss\": 1}, {\"note\": \"a\\u0000\"}]").post(runs + "/r1/history").then()
                .statusCode(422).body("errors[0].field", equalTo("[1].note"));
        as(Contract.RUNS).get(runs + "/r1/history").then().statusCode(200).body("rows", hasSize(0));
        as(Contract.ACCOUNTS).body("{\"name\": \"laptop\\u0000\"}").post("/api/v1/users/me/api-keys").then()
                .statusCode(422).body("errors[0].field", equalTo("name"));
        as(Contract.AUTOMATIONS, admin).body("{\"name\": \"T\\u0000\", \"value\": \"v\"}")
                .post("/api/v1/teams/" + team.name + "/secrets").then().statusCode(422)
                .body("errors[0].field", equalTo("name"));
    }

    @Test
    void aNullItemOfAListIsA422AtItsIndexInEveryShape() {
        String nullItem = "{\"batch\": [null]}";
        for (String path : List.of("/call/upsert_batch", "/feedback/batch/create", "/v2/0/0/calls/complete",
                "/v2/" + member.name() + "/nul/calls/complete")) {
            as(Contract.DATASETS).body(nullItem).post(path).then().statusCode(422)
                    .body("detail[0].loc", contains("body", "batch", 0)).body("detail[0].type", equalTo("dict_type"));
        }
        String project = "/api/v1/entities/" + team.name + "/projects/nul/automations";
        String registry = "/api/v1/registries/" + fixtures.registry("nulls", admin).name + "/automations";
        String create = "{\"name\": \"a\", \"event\": \"RUN_STATE\", \"team\": \"" + team.name
                + "\", \"webhook_id\": 1, \"run_states\": [null]}";
        for (String path : List.of(project, registry)) {
            as(Contract.AUTOMATIONS, admin).body(create).post(path).then().statusCode(422)
                    .contentType("application/problem+json").body("errors[0].field", equalTo("run_states[0]"))
                    .body("errors[0].message", equalTo("Input should be a valid string"));
            // even for an automation that does not exist: the body is read first
            as(Contract.AUTOMATIONS, admin).body("{\"run_states\": [null]}").patch(path + "/999999").then()
                    .statusCode(422).body("errors[0].field", equalTo("run_states[0]"));
        }
        as(Contract.RUNS).body("[{\"loss\": 1}, null]").post(runs + "/none/history").then().statusCode(422)
                .body("errors[0].field", equalTo("[1]"));
        // untyped JSON values keep their nulls: a run's config is data
        as(Contract.RUNS).body("{\"name\": \"nullable\", \"config\": {\"layers\": [null, 1]}}").post(runs).then()
                .statusCode(201);
    }

    @Test
    void anUnpairedSurrogateIsRefusedAsTheNulIs() {
        as(Contract.RUNS).body("{\"name\": \"r2\", \"config\": {\"lr\": \"a\\ud800\"}}").post(runs).then()
                .statusCode(422).body("errors[0].field", equalTo("config.lr"))
                .body("errors[0].message", containsString("surrogate"));
        as(Contract.DATASETS).body("{\"name\": \"x\", \"description\": \"\\udc00d\", \"rows\": [{\"a\": 1}]}")
                .post(datasets).then().statusCode(422).body("detail[0].loc", contains("body", "description"))
                .body("detail[0].type", equalTo("string_surrogate"));
        // a pair is one character outside the basic plane, stored as sent
        as(Contract.RUNS).body("{\"name\": \"r3\", \"config\": {\"emoji\": \"\\ud83d\\ude00\"}}").post(runs).then()
                .statusCode(201).body("config.emoji", equalTo("\ud83d\ude00"));
    }

    @Test
    void aNulInAMultipartTextFieldOrFileNameIsA422NamingTheField() {
        String versions = "/api/v1/entities/" + member.name() + "/projects/nul/artifacts/collections/w/versions";
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "a.txt", new byte[] { 1 }, "text/plain").multiPart("type", "model")
                .multiPart("description", "d\u0000").post(versions).then().statusCode(422)
                .contentType("application/problem+json").body("errors[0].field", equalTo("description"));
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "a.txt", new byte[] { 1 }, "text/plain").multiPart("type", "model")
                .multiPart("metadata", "{\"k\": \"\\u0000\"}").post(versions).then().statusCode(422)
                .body("errors[0].field", equalTo("metadata.k"));
    }

    @Test
    void aNulInAParameterIsA422NamingTheParameter() {
        as(Contract.DATASETS).urlEncodingEnabled(false).get(datasets + "/a%00b/versions/latest").then().statusCode(422)
                .body("detail[0].loc", contains("path", "object_id")).body("detail[0].type", equalTo("string_nul"));
        as(Contract.RUNS).queryParam("name", "a\u0000").get(runs).then().statusCode(422)
                .contentType("application/problem+json").body("errors[0].field", equalTo("name"));
    }

    @Test
    void jsonNestedTooDeeplyIsA422InEveryShape() {
        String deep = nested(3000);
        as(Contract.RUNS).body("{\"name\": \"deep\", \"config\": {\"a\": " + deep + "}}").post(runs).then()
                .statusCode(422).contentType("application/problem+json")
                .body("detail", containsString("nesting depth"));
        as(Contract.DATASETS).body("{\"name\": \"deep\", \"rows\": [{\"a\": " + deep + "}]}").post(datasets).then()
                .statusCode(422).body("detail[0].loc[0]", equalTo("body"))
                .body("detail[0].type", equalTo("json_invalid"));
        // the limit, not the old default of 1000, applies
        String over = nested(MAX_DEPTH);
        as(Contract.RUNS).body("{\"name\": \"deep\", \"config\": {\"a\": " + over + "}}").post(runs).then()
                .statusCode(422);
        String within = nested(MAX_DEPTH - 3);
        as(Contract.RUNS).body("{\"name\": \"deep\", \"config\": {\"a\": " + within + "}}").post(runs).then()
                .statusCode(201);
    }

    @Test
    void aNumberOrABooleanIsNoString() {
        String secrets = "/api/v1/teams/" + team.name + "/secrets";
        as(Contract.AUTOMATIONS, admin).body(Map.of("name", "GH_TOKEN", "value", "real")).post(secrets).then()
                .statusCode(201);
        as(Contract.AUTOMATIONS, admin).body("{\"value\": 7}").put(secrets + "/GH_TOKEN").then().statusCode(422)
                .contentType("application/problem+json").body("errors[0].field", equalTo("value"));
        as(Contract.AUTOMATIONS, admin).body("{\"name\": \"OTHER\", \"value\": true}").post(secrets).then()
                .statusCode(422).body("errors[0].field", equalTo("value"));
        as(Contract.DATASETS).body("{\"name\": 5, \"rows\": []}").post(datasets).then().statusCode(422)
                .body("detail[0].loc", contains("body", "name")).body("detail[0].type", equalTo("string_type"));
    }

    @Test
    void anOverLongRequestLineIsAnsweredInTheInterfacesShape() {
        String segment = "x".repeat(10_001);
        given().auth().oauth2(member.key()).get(datasets + "/" + segment).then().statusCode(414)
                .contentType(ContentType.JSON).body("detail", not(equalTo(null)));
        given().auth().oauth2(member.key()).get(runs + "/" + segment).then().statusCode(414)
                .contentType("application/problem+json").body("status", equalTo(414));
        given().auth().oauth2(member.key()).get("/v1/models/" + segment).then().statusCode(414)
                .contentType(ContentType.JSON).body("error.message", not(equalTo(null)));
        given().auth().oauth2(member.key()).get(runs + "?name=" + "y".repeat(List.of(1).size() * 20_000)).then()
                .statusCode(414).contentType("application/problem+json");
    }
}

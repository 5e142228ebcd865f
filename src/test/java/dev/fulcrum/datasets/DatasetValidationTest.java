package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.create;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/** Every bad input gets a 422 HTTPValidationError with a useful loc, or a 404/413 detail; never a 500. */
@QuarkusTest
class DatasetValidationTest {

    @Inject
    Fixtures fixtures;

    private Account owner;
    private String base;

    @BeforeEach
    void owner() {
        owner = fixtures.user("validator");
        base = "/v2/" + owner.name() + "/p";
        create(owner.key(), owner.name() + "/p", "known", rows(2, "k")).then().statusCode(200);
    }

    private void post(String body, int status, Object... loc) {
        var then = as(owner.key()).contentType(ContentType.JSON).body(body).post(base + "/datasets").then()
                .statusCode(status);
        if (loc.length > 0) {
            then.body("detail[0].loc", contains(loc)).body("detail[0].msg", org.hamcrest.Matchers.notNullValue())
                    .body("detail[0].type", org.hamcrest.Matchers.notNullValue());
        }
    }

    @Test
    void malformedJsonPointsAtTheBodyPosition() {
        as(owner.key()).contentType(ContentType.JSON).body("{\"rows\": [").post(base + "/datasets").then()
                .statusCode(422).body("detail[0].loc[0]", equalTo("body"))
                .body("detail[0].type", equalTo("json_invalid"));
    }

    @Test
    void aNameWhoseObjectIdIsDotOrDotDotIsRefused() {
        post("{\"name\": \"..\", \"rows\": []}", 422, "body", "name");
        post("{\"name\": \".\", \"rows\": []}", 422, "body", "name");
        post("{\"name\": \"...\", \"rows\": []}", 200);
    }

    @Test
    void missingOrMistypedFields() {
        post("{}", 422, "body", "rows");
        post("{\"name\": \"x\"}", 422, "body", "rows");
        post("{\"rows\": {\"a\": 1}}", 422, "body", "rows");
        post("{\"rows\": [{\"a\": 1}, {\"a\": 2}, {\"a\": 3}, 4]}", 422, "body", "rows", 3);
        post("{\"rows\": [{\"a\": 1}, [1, 2]]}", 422, "body", "rows", 1);
        post("{\"rows\": [{\"a\": 1}], \"name\": {\"n\": 1}}", 422, "body", "name");
        post("{\"rows\": [{\"a\": 1}], \"name\": \"bad:name\"}", 422, "body", "name");
        post("{\"rows\": [{\"a\": 1}], \"name\": \"\"}", 422, "body", "name");
        post("{\"rows\": [{\"a\": 1e999}]}", 422, "body", "rows", 0);
        post("null", 422, "body");
        post("[]", 422, "body");
    }

    @Test
    void emptyRowsMakeAnEmptyDataset() {
        post("{\"name\": \"empty\", \"rows\": []}", 200);
    }

    @Test
    void notJsonIsUnsupported() {
        as(owner.key()).contentType(ContentType.TEXT).body("rows").post(base + "/datasets").then().statusCode(415)
                .body("detail", org.hamcrest.Matchers.containsString("application/json"));
    }

    @Test
    void malformedPathParameters() {
        as(owner.key()).get("/v2/bad!entity/p/datasets/known/versions/latest").then().statusCode(422)
                .body("detail[0].loc", contains("path", "entity"));
        as(owner.key()).get("/v2/" + owner.name() + "/-p/datasets/known/versions/latest").then().statusCode(422)
                .body("detail[0].loc", contains("path", "project"));
        as(owner.key()).get(base + "/datasets/kn@wn/versions/latest").then().statusCode(422).body("detail[0].loc",
                contains("path", "object_id"));
        as(owner.key()).get(base + "/datasets/known/versions/not-a-digest").then().statusCode(422).body("detail[0].loc",
                contains("path", "digest"));
        as(owner.key()).get(base + "/tables/ABC/rows").then().statusCode(422).body("detail[0].loc",
                contains("path", "table_digest"));
    }

    @Test
    void negativeOrNonNumericPaging() {
        as(owner.key()).queryParam("limit", -1).get(base + "/datasets").then().statusCode(422).body("detail[0].loc",
                contains("query", "limit"));
        as(owner.key()).queryParam("offset", -3).get(base + "/datasets").then().statusCode(422).body("detail[0].loc",
                contains("query", "offset"));
        as(owner.key()).queryParam("limit", "ten").get(base + "/datasets").then().statusCode(422).body("detail[0].loc",
                hasItems("query"));
        as(owner.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", owner.name() + "/p", "digest", "0".repeat(64), "limit", -1))
                .post("/table/query").then().statusCode(422);
        as(owner.key()).contentType(ContentType.JSON).body(Map.of("project_id", "no-slash", "digest", "x"))
                .post("/table/query").then().statusCode(422).body("detail[0].loc", contains("body", "project_id"));
        as(owner.key()).contentType(ContentType.JSON).body(Map.of("project_id", owner.name() + "/p", "limit", "x"))
                .post("/table/query").then().statusCode(422).body("detail[0].loc", contains("body", "limit"));
    }

    @Test
    void unknownThingsAre404WithADetailMessage() {
        as(owner.key()).get(base + "/datasets/unknown/versions/latest").then().statusCode(404).body("detail",
                org.hamcrest.Matchers.containsString("not found"));
        as(owner.key()).get(base + "/datasets/known/versions/v7").then().statusCode(404);
        as(owner.key()).get(base + "/datasets/known/versions/" + "A".repeat(43)).then().statusCode(404);
        as(owner.key()).get("/v2/" + owner.name() + "/nope/datasets/known/versions/latest").then().statusCode(404);
        as(owner.key()).get("/v2/nobody-" + owner.name() + "/p/datasets/known/versions/latest").then().statusCode(404);
        as(owner.key()).get(base + "/tables/" + "0".repeat(64) + "/rows").then().statusCode(404);
        as(owner.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", owner.name() + "/p", "digest", "0".repeat(64))).post("/table/query").then()
                .statusCode(404);
    }

    @Test
    void manyRowsInOneRequest() {
        create(owner.key(), owner.name() + "/p", "big", rows(10_000, "big")).then().statusCode(200);
        as(owner.key()).get(base + "/datasets/big/versions/v0").then().statusCode(200);
        String lastRows = as(owner.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", owner.name() + "/p", "digest", tableOf("big"), "offset", 9_998))
                .post("/table/query").then().statusCode(200).extract().asString();
        org.junit.jupiter.api.Assertions.assertTrue(lastRows.contains("big question 9999"), lastRows);
    }

    private String tableOf(String objectId) {
        String ref = as(owner.key()).get(base + "/datasets/" + objectId + "/versions/latest").then().extract()
                .path("rows");
        return ref.substring(ref.lastIndexOf('/') + 1);
    }

    @Test
    void rowsWithEveryJsonTypeRoundTrip() {
        List<Map<String, Object>> rows = List.of(Map.of("s", "\u00e9\u00fc \"q\"", "n", 1.5e-7, "i", 12345678901234L,
                "b", true, "l", List.of(1, "two", Map.of("three", 3)), "o", Map.of("k", "v")));
        create(owner.key(), owner.name() + "/p", "types", rows).then().statusCode(200);
        as(owner.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", owner.name() + "/p", "digest", tableOf("types"))).post("/table/query").then()
                .statusCode(200).body("rows[0].val.s", equalTo("\u00e9\u00fc \"q\""))
                .body("rows[0].val.i", equalTo(12345678901234L)).body("rows[0].val.l[2].three", equalTo(3))
                .body("rows[0].val.b", equalTo(true));
    }
}

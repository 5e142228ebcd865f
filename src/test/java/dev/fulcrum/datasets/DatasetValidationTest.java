package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.create;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.startsWith;

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

    /** A body to an operation of the Weave paths; answers the 422's first violation checked against loc, msg, type. */
    private void refused(String path, Object body, List<Object> loc, String msg, String type) {
        as(owner.key()).contentType(ContentType.JSON).body(body).post(path).then().statusCode(422)
                .body("detail[0].loc", equalTo(loc)).body("detail[0].msg", equalTo(msg))
                .body("detail[0].type", equalTo(type));
    }

    @Test
    void theContractsRulesAreAnsweredInItsWords() {
        String project = owner.name() + "/p";
        String table = "0".repeat(64);
        String objectIdRule = "Must be 1 to 128 letters, digits, '_', '.' or '-', and not '.' or '..'";
        String versionRule = "Must be a 43-character object digest, 'latest' or 'v<N>'";
        for (String name : List.of("   ", "..", "a*b")) {
            post("{\"name\": \"" + name + "\", \"rows\": []}", 422, "body", "name");
        }
        as(owner.key()).contentType(ContentType.JSON).body(Map.of("name", "..", "rows", List.of()))
                .post(base + "/datasets").then().statusCode(422).body("detail[0].msg", equalTo(
                        "Must be 1 to 128 letters, digits, spaces or '_', '.', '/', '-', not only spaces, and not '.' or '..'"));
        as(owner.key()).get(base + "/datasets/known/versions/v1x").then().statusCode(422).body("detail[0].msg",
                equalTo(versionRule));
        as(owner.key()).queryParam("digests", "latest,nope").delete(base + "/datasets/known").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("query", "digests", 0)))
                .body("detail[0].type", equalTo("string_pattern_mismatch"));
        refused("/obj/read", Map.of("project_id", project, "object_id", "..", "digest", "latest"),
                List.of("body", "object_id"), objectIdRule, "string_pattern_mismatch");
        refused("/obj/delete", Map.of("project_id", project, "object_id", "x", "digests", List.of("latest", "v")),
                List.of("body", "digests", 1), versionRule, "string_pattern_mismatch");
        refused("/table/query_stats", Map.of("project_id", project, "digest", "ABC"), List.of("body", "digest"),
                "Must be a 64-character lowercase hex table digest", "string_pattern_mismatch");
        refused("/table/query",
                Map.of("project_id", project, "digest", table, "sort_by",
                        List.of(Map.of("field", "a..b", "direction", "asc"))),
                List.of("body", "sort_by", 0, "field"), "Must be a dot-separated key path such as 'a' or 'a.b'",
                "string_pattern_mismatch");
        refused("/table/query",
                Map.of("project_id", project, "digest", table, "sort_by",
                        List.of(Map.of("field", "a", "direction", "up"))),
                List.of("body", "sort_by", 0, "direction"), "Input should be 'asc' or 'desc'", "enum");
        refused("/table/update",
                Map.of("project_id", project, "base_digest", table, "updates",
                        List.of(Map.of("pop", Map.of("index", -1)))),
                List.of("body", "updates", 0, "pop", "index"), "Must be 0 or more", "greater_than_equal");
        refused("/calls/stream_query", Map.of("project_id", project, "limit", 10_001), List.of("body", "limit"),
                "Must be between 0 and 10000", "less_than_equal");
        refused("/feedback/query",
                Map.of("project_id", project, "sort_by", List.of(Map.of("field", "payload", "direction", "asc"))),
                List.of("body", "sort_by", 0, "field"),
                "Input should be 'id', 'weave_ref', 'feedback_type', 'wb_user_id', 'creator', 'call_ref', "
                        + "'runnable_ref' or 'created_at'",
                "enum");
        refused("/feedback/create",
                Map.of("project_id", project, "weave_ref", "call:1", "feedback_type", "note", "payload", Map.of()),
                List.of("body", "weave_ref"),
                "Must be a reference 'weave:///entity/project/...' of the request's project",
                "string_pattern_mismatch");
        refused("/feedback/create",
                Map.of("project_id", project, "weave_ref", "weave:///" + project + "/call/1", "feedback_type", "",
                        "payload", Map.of()),
                List.of("body", "feedback_type"), "Must be at least 1 character", "string_too_short");
        refused("/feedback/create",
                Map.of("project_id", project, "weave_ref", "weave:///" + project + "/call/1", "feedback_type", "note",
                        "payload", List.of()),
                List.of("body", "payload"), "Input should be a valid dictionary", "dict_type");
        refused("/feedback/purge", Map.of("project_id", project, "query", Map.of("$expr", 1)),
                List.of("body", "query", "$expr"), "Input should be a valid dictionary", "dict_type");
        refused("/call/start",
                Map.of("start", Map.of("project_id", project, "op_name", "", "started_at", "2026-01-01T00:00:00Z")),
                List.of("body", "start", "op_name"), "Must be at least 1 character", "string_too_short");
        // java.time holds no offset beyond 18 hours, which RFC 3339 allows
        refused("/call/start",
                Map.of("start",
                        Map.of("project_id", project, "op_name", "op", "started_at", "2026-01-01T00:00:00+23:30")),
                List.of("body", "start", "started_at"),
                "Input should be a valid datetime (RFC 3339, with an offset of at most 18 hours)", "datetime_parsing");
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
        as(owner.key()).contentType(ContentType.JSON).body(Map.of("project_id", "no-slash", "digest", "0".repeat(64)))
                .post("/table/query").then().statusCode(422).body("detail[0].loc", contains("body", "project_id"))
                .body("detail[0].msg", startsWith("Must be 'entity/project'"))
                .body("detail[0].type", equalTo("string_pattern_mismatch"));
        // both refused at once, in the contract's words
        as(owner.key()).contentType(ContentType.JSON).body(Map.of("project_id", "no-slash", "digest", "x"))
                .post("/table/query").then().statusCode(422)
                .body("detail.loc", contains(List.of("body", "digest"), List.of("body", "project_id")))
                .body("detail[0].msg", equalTo("Must be a 64-character lowercase hex table digest"));
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

package dev.fulcrum.traces;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.Fixtures.Lab;

/** Weave's calls, feedback and costs over HTTP: who may read and write, filters, paging, errors. */
@QuarkusTest
class WeaveCallsApiTest {

    @Inject
    Fixtures fixtures;

    /** The datasets API (where Weave's calls are) as a caller; every response checked against openapi/datasets.yaml. */
    private static RequestSpecification as(String key) {
        return given().filter(Contract.DATASETS).auth().oauth2(key);
    }

    private static RequestSpecification json(Account account) {
        return as(account.key()).contentType(ContentType.JSON);
    }

    private static Map<String, Object> complete(String project, String id, String parent, String op, String start) {
        Map<String, Object> call = new java.util.HashMap<>(
                Map.of("project_id", project, "id", id, "trace_id", "t1", "op_name", op, "started_at", start,
                        "ended_at", start.replace(":00Z", ":01Z"), "inputs", Map.of("q", id), "summary", Map.of()));
        Map<String, Object> output = new java.util.LinkedHashMap<>();
        output.put("z", 1);
        output.put("a", 2);
        call.put("output", output);
        call.put("parent_id", parent);
        return call;
    }

    @Test
    void membersWriteViewersReadOutsidersSeeNothing() {
        Lab lab = fixtures.lab("calls");
        String entity = lab.project().split("/")[0];
        List<Map<String, Object>> batch = List.of(
                complete(lab.project(), "root", null, "weave:///" + lab.project() + "/op/main:abc",
                        "2026-01-01T00:00:00Z"),
                complete(lab.project(), "child-1", "root", "weave:///" + lab.project() + "/op/step:abc",
                        "2026-01-01T00:01:00Z"),
                complete(lab.project(), "child-2", "root", "weave:///" + lab.project() + "/op/step:def",
                        "2026-01-01T00:02:00Z"));
        json(lab.viewer()).body(Map.of("batch", batch)).post("/v2/" + lab.project() + "/calls/complete").then()
                .statusCode(403);
        json(lab.member()).body(Map.of("batch", batch)).post("/v2/" + lab.project() + "/calls/complete").then()
                .statusCode(200);
        // a batch item of another project than the path's is refused, naming it
        json(lab.member())
                .body(Map.of("batch", List.of(complete(entity + "/other", "x", null, "op", "2026-01-01T00:00:00Z"))))
                .post("/v2/" + lab.project() + "/calls/complete").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "batch", 0, "project_id")));

        // ordered by start, keys of stored values in their order
        String lines = json(lab.viewer()).body(Map.of("project_id", lab.project())).post("/calls/stream_query").then()
                .statusCode(200).extract().asString();
        String[] rows = lines.split("\n");
        assertEquals(3, rows.length);
        assertEquals(true, rows[0].contains("\"id\":\"root\"") && rows[0].contains("\"output\":{\"z\": 1, \"a\": 2}"),
                rows[0]);
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "filter",
                        Map.of("op_names", List.of("weave:///" + lab.project() + "/op/step:*")), "sort_by",
                        List.of(Map.of("field", "started_at", "direction", "desc")), "limit", 1))
                .post("/calls/stream_query").then().statusCode(200)
                .body(equalTo(json(lab.viewer())
                        .body(Map.of("project_id", lab.project(), "filter", Map.of("call_ids", List.of("child-2"))))
                        .post("/calls/stream_query").asString()));
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "filter", Map.of("trace_roots_only", true)))
                .post("/calls/query_stats").then().statusCode(200).body("count", equalTo(1));
        json(lab.outsider()).body(Map.of("project_id", lab.project())).post("/calls/stream_query").then()
                .statusCode(403);

        // an unknown field of $expr is a 422 naming it
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "query",
                        Map.of("$expr",
                                Map.of("$eq", List.of(Map.of("$getField", "password"), Map.of("$literal", "x"))))))
                .post("/calls/stream_query").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "query", "$expr", "$eq", 0, "$getField")));

        // rename and delete: members only; deleting the root deletes its children
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "call_id", "root", "display_name", "n"))
                .post("/call/update").then().statusCode(403);
        json(lab.member()).body(Map.of("project_id", lab.project(), "call_id", "root", "display_name", "n"))
                .post("/call/update").then().statusCode(200);
        json(lab.member()).body(Map.of("project_id", lab.project(), "call_id", "nope", "display_name", "n"))
                .post("/call/update").then().statusCode(404);
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "call_ids", List.of("root"))).post("/calls/delete")
                .then().statusCode(403);
        json(lab.member()).body(Map.of("project_id", lab.project(), "call_ids", List.of("root"))).post("/calls/delete")
                .then().statusCode(200).body("num_deleted", equalTo(3));
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "id", "child-1")).post("/call/read").then()
                .statusCode(200).body("call", equalTo(null));
    }

    @Test
    void readsAnswerStoredValuesWithTheDerivedSummaryAndRefusalsComeFirst() throws Exception {
        Lab lab = fixtures.lab("calls");
        Map<String, Object> used = complete(lab.project(), "used", null,
                "weave:///" + lab.project() + "/op/predict:abc", "2026-01-01T00:00:00Z");
        used.put("display_name", "Naïve \"quoted\" \\ name");
        used.put("summary", Map.of("usage", Map.of("gpt", Map.of("requests", 1))));
        Map<String, Object> kept = complete(lab.project(), "kept", null, "weave:///" + lab.project() + "/op/score:abc",
                "2026-01-01T00:01:00Z");
        kept.put("summary", Map.of("weave", Map.of("feedback", 1, "status", "stored")));
        kept.put("exception", "boom");
        // the same call twice in one batch: the later values, the first display name (as two upserts would leave it)
        Map<String, Object> twice = complete(lab.project(), "twice", null, "op", "2026-01-01T00:02:00Z");
        twice.put("display_name", "first");
        Map<String, Object> again = complete(lab.project(), "twice", null, "op", "2026-01-01T00:02:00Z");
        again.put("display_name", "second");
        again.put("output", "later");
        json(lab.member()).body(Map.of("batch", List.of(used, kept, twice, again)))
                .post("/v2/" + lab.project() + "/calls/complete").then().statusCode(200);

        // a server administrator reads a project of a team it is not a member of
        String lines = as(dev.fulcrum.support.EmbeddedPostgresResource.ADMIN_KEY).contentType(ContentType.JSON)
                .body(Map.of("project_id", lab.project())).post("/calls/stream_query").then().statusCode(200).extract()
                .asString();
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<com.fasterxml.jackson.databind.JsonNode> calls = new java.util.ArrayList<>();
        for (String line : lines.split("\n")) {
            calls.add(mapper.readTree(line));
        }
        assertEquals(3, calls.size(), lines);
        assertEquals(mapper.readTree("""
                {"usage": {"gpt": {"requests": 1}},
                 "weave": {"status": "success", "trace_name": "Naïve \\"quoted\\" \\\\ name", "latency_ms": 1000}}"""),
                calls.get(0).get("summary"));
        // a stored summary.weave keeps its other keys; the derived ones replace what was stored under their names
        assertEquals(mapper.readTree("""
                {"weave": {"feedback": 1, "status": "error", "trace_name": "score", "latency_ms": 1000}}"""),
                calls.get(1).get("summary"));
        assertEquals("first", calls.get(2).get("display_name").textValue());
        assertEquals("later", calls.get(2).get("output").textValue());
        // call/read answers the same call as the query
        assertEquals(calls.get(0),
                mapper.readTree(json(lab.viewer()).body(Map.of("project_id", lab.project(), "id", "used"))
                        .post("/call/read").then().statusCode(200).extract().asString()).get("call"));

        // who may read is decided before the request's other errors: an outsider's query of an unknown field is a
        // 403, a viewer's a 422
        Map<String, Object> badField = Map.of("project_id", lab.project(), "query",
                Map.of("$expr", Map.of("$eq", List.of(Map.of("$getField", "password"), Map.of("$literal", "x")))));
        json(lab.outsider()).body(badField).post("/calls/stream_query").then().statusCode(403);
        json(lab.viewer()).body(badField).post("/calls/stream_query").then().statusCode(422).body("detail[0].loc",
                equalTo(List.of("body", "query", "$expr", "$eq", 0, "$getField")));
        // a time field holds no text to search: a 422 at it (it was the database's error, a 500)
        Map<String, Object> searchedTime = Map.of("project_id", lab.project(), "query",
                Map.of("$expr", Map.of("$contains",
                        Map.of("input", Map.of("$getField", "started_at"), "substr", Map.of("$literal", "2026")))));
        json(lab.viewer()).body(searchedTime).post("/calls/stream_query").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "query", "$expr", "$contains", "input", "$getField")))
                .body("detail[0].msg", equalTo("$contains reads a text field"));
        // epoch seconds beyond the years 1 to 9999 of the contract: a 422 at the literal (was the database's error)
        Map<String, Object> farFuture = Map.of("project_id", lab.project(), "query",
                Map.of("$expr", Map.of("$gt", List.of(Map.of("$getField", "started_at"), Map.of("$literal", 1e300)))));
        json(lab.viewer()).body(farFuture).post("/calls/stream_query").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "query", "$expr", "$gt", 1))).body("detail[0].msg",
                        equalTo("Epoch seconds must be between -62135596800 and 253402300799 (years 1 to 9999)"));
        // but what the contract refuses (a sort field that is neither a column nor a key path) is refused first, as
        // FastAPI does
        Map<String, Object> badSort = Map.of("project_id", lab.project(), "sort_by",
                List.of(Map.of("field", "password", "direction", "asc")));
        for (Account caller : List.of(lab.outsider(), lab.viewer())) {
            json(caller).body(badSort).post("/calls/stream_query").then().statusCode(422)
                    .body("detail[0].loc", equalTo(List.of("body", "sort_by", 0, "field")))
                    .body("detail[0].msg", startsWith("Must be a call's column (id, trace_id,"))
                    .body("detail[0].type", equalTo("string_pattern_mismatch"));
        }
        json(lab.outsider()).body(Map.of("project_id", lab.project(), "id", "used")).post("/call/read").then()
                .statusCode(403);
        String entity = lab.project().split("/")[0];
        json(lab.viewer()).body(Map.of("project_id", entity + "/nothing-here")).post("/calls/stream_query").then()
                .statusCode(404).body("detail", equalTo("Project " + entity + "/nothing-here not found"));
        json(lab.viewer()).body(Map.of("project_id", "no-such-entity-x/p", "id", "used")).post("/call/read").then()
                .statusCode(404).body("detail", equalTo("Entity no-such-entity-x not found"));
    }

    @Test
    void startsAndEndsMeetInEitherOrder() {
        Lab lab = fixtures.lab("calls");
        Map<String, Object> end = Map.of("project_id", lab.project(), "id", "c1", "ended_at", "2026-01-01T00:00:05Z",
                "output", "done", "summary", Map.of());
        Map<String, Object> start = Map.of("project_id", lab.project(), "id", "c1", "trace_id", "t", "op_name", "op",
                "started_at", "2026-01-01T00:00:00Z", "attributes", Map.of(), "inputs", Map.of("x", 1));
        json(lab.member())
                .body(Map.of("batch",
                        List.of(Map.of("mode", "end", "req", Map.of("end", end)),
                                Map.of("mode", "start", "req", Map.of("start", start)))))
                .post("/call/upsert_batch").then().statusCode(200);
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "id", "c1")).post("/call/read").then()
                .statusCode(200).body("call.output", equalTo("done")).body("call.inputs.x", equalTo(1))
                .body("call.summary.weave.status", equalTo("success"))
                .body("call.summary.weave.latency_ms", equalTo(5000));
        json(lab.viewer()).body(Map.of("start", start)).post("/call/start").then().statusCode(403);
    }

    @Test
    void feedbackAndCosts() {
        Lab lab = fixtures.lab("calls");
        String ref = "weave:///" + lab.project() + "/call/c1";
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "weave_ref", ref, "feedback_type", "note",
                "payload", Map.of("note", "x"))).post("/feedback/create").then().statusCode(403);
        json(lab.member()).body(Map.of("project_id", lab.project(), "weave_ref", "weave:///other/p/call/c1",
                "feedback_type", "note", "payload", Map.of("note", "x"))).post("/feedback/create").then()
                .statusCode(422);
        json(lab.member()).body(Map.of("project_id", lab.project(), "weave_ref", ref, "feedback_type", "note",
                "payload", Map.of("note", "x"))).post("/feedback/create").then().statusCode(200);
        json(lab.viewer()).body(Map.of("project_id", lab.project())).post("/feedback/query").then().statusCode(200)
                .body("result.size()", equalTo(1)).body("result[0].payload.note", equalTo("x"));
        json(lab.member())
                .body(Map.of("project_id", lab.project(), "query",
                        Map.of("$expr",
                                Map.of("$eq",
                                        List.of(Map.of("$getField", "feedback_type"), Map.of("$literal", "note"))))))
                .post("/feedback/purge").then().statusCode(200);
        json(lab.viewer()).body(Map.of("project_id", lab.project())).post("/feedback/query").then().statusCode(200)
                .body("result.size()", equalTo(0));

        json(lab.viewer()).body(Map.of("project_id", lab.project())).post("/cost/query").then().statusCode(200)
                .body("results.size()", equalTo(0));
    }

    @Test
    void inputAndOutputRefsFindTheCallsThatHoldThem() {
        Lab lab = fixtures.lab("calls");
        String evaluation = "weave:///" + lab.project() + "/object/Evaluation:abc";
        String dataset = "weave:///" + lab.project() + "/object/Dataset:def";
        Map<String, Object> top = complete(lab.project(), "eval", null, "op", "2026-01-01T00:00:00Z");
        top.put("inputs", Map.of("self", evaluation, "model", "weave:///" + lab.project() + "/object/Model:1"));
        Map<String, Object> nested = complete(lab.project(), "nested", null, "op", "2026-01-01T00:01:00Z");
        nested.put("inputs", Map.of("args", List.of(1, Map.of("data", dataset))));
        nested.put("output", Map.of("made", evaluation));
        Map<String, Object> plain = complete(lab.project(), "plain", null, "op", "2026-01-01T00:02:00Z");
        plain.put("inputs", Map.of("text", evaluation + " is not a ref"));
        json(lab.member()).body(Map.of("batch", List.of(top, nested, plain)))
                .post("/v2/" + lab.project() + "/calls/complete").then().statusCode(200);
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "filter", Map.of("input_refs", List.of(evaluation))))
                .post("/calls/query_stats").then().statusCode(200).body("count", equalTo(1));
        String found = json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "filter",
                        Map.of("input_refs", List.of(dataset, evaluation), "op_names", List.of("op"))))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        assertEquals(2, found.split("\n").length, found);
        assertEquals(true, found.contains("\"id\":\"eval\"") && found.contains("\"id\":\"nested\""), found);
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "filter", Map.of("output_refs", List.of(evaluation))))
                .post("/calls/query_stats").then().statusCode(200).body("count", equalTo(1));
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "filter",
                        Map.of("input_refs", List.of("weave:///x/y/object/z:1"))))
                .post("/calls/query_stats").then().statusCode(200).body("count", equalTo(0));
    }

    /** A page of calls' ids, as a query of {@code body} (the project's added) answers them in order. */
    private static List<String> ids(Account caller, String project, Map<String, Object> body) throws Exception {
        Map<String, Object> query = new java.util.HashMap<>(body);
        query.put("project_id", project);
        String lines = json(caller).body(query).post("/calls/stream_query").then().statusCode(200).extract().asString();
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> ids = new java.util.ArrayList<>();
        for (String line : lines.split("\n")) {
            if (!line.isBlank()) {
                ids.add(mapper.readTree(line).get("id").textValue());
            }
        }
        return ids;
    }

    private static Map<String, Object> sortedBy(String field, String direction) {
        return Map.of("sort_by", List.of(Map.of("field", field, "direction", direction)));
    }

    private static Map<String, Object> where(Map<String, Object> expr) {
        return Map.of("query", Map.of("$expr", expr));
    }

    private static Map<String, Object> convert(String field, String to) {
        return Map.of("$convert", Map.of("input", Map.of("$getField", field), "to", to));
    }

    @Test
    void sortsByKeyPathsAndLatencyConvertsValuesAndIncludesFeedback() throws Exception {
        Lab lab = fixtures.lab("calls-sorted");
        String p = lab.project();
        // x: numbers, and a call without it; v: text holding numbers (or not); latencies 3 s, 1 s, 2 s and running
        Map<String, Object> a = complete(p, "a", null, "op", "2026-01-01T00:00:00Z");
        a.put("inputs", Map.of("x", 10));
        a.put("output", Map.of("v", "10.5"));
        a.put("ended_at", "2026-01-01T00:00:03Z");
        Map<String, Object> b = complete(p, "b", null, "op", "2026-01-01T00:01:00Z");
        b.put("inputs", Map.of("x", 9.5));
        b.put("output", Map.of("v", "9"));
        Map<String, Object> c = complete(p, "c", null, "op", "2026-01-01T00:02:00Z");
        c.put("inputs", Map.of("x", -2));
        c.put("output", Map.of("v", "abc"));
        c.put("ended_at", "2026-01-01T00:02:02Z");
        json(lab.member()).body(Map.of("batch", List.of(a, b, c))).post("/v2/" + p + "/calls/complete").then()
                .statusCode(200);
        json(lab.member())
                .body(Map.of("start",
                        Map.of("project_id", p, "id", "d", "trace_id", "d", "op_name", "op", "started_at",
                                "2026-01-01T00:03:00Z", "inputs", Map.of("y", 1), "attributes", Map.of())))
                .post("/call/start").then().statusCode(200);

        // key paths compare as JSON: numbers by value (as text, "9.5" would follow "10"); a missing key last
        // ascending, first descending
        assertEquals(List.of("c", "b", "a", "d"), ids(lab.viewer(), p, sortedBy("inputs.x", "asc")));
        assertEquals(List.of("d", "a", "b", "c"), ids(lab.viewer(), p, sortedBy("inputs.x", "desc")));
        assertEquals(List.of("d", "c", "b", "a"), ids(lab.viewer(), p, sortedBy("output.v", "desc")));
        // latency: a running call has none
        assertEquals(List.of("b", "c", "a", "d"), ids(lab.viewer(), p, sortedBy("summary.weave.latency_ms", "asc")));
        assertEquals(List.of("d", "a", "c", "b"), ids(lab.viewer(), p, sortedBy("summary.weave.latency_ms", "desc")));
        assertEquals(List.of("a", "b", "c", "d"), ids(lab.viewer(), p, sortedBy("summary.weave.status", "desc")));

        // $convert: text holding numbers compared as numbers; what does not convert matches nothing; the literal is
        // converted alike
        assertEquals(List.of("a"), ids(lab.viewer(), p,
                where(Map.of("$gt", List.of(convert("output.v", "double"), Map.of("$literal", 9.5))))));
        assertEquals(List.of("a"), ids(lab.viewer(), p,
                where(Map.of("$lt", List.of(Map.of("$literal", "9.75"), convert("output.v", "double"))))));
        assertEquals(List.of("b"),
                ids(lab.viewer(), p, where(Map.of("$eq", List.of(convert("output.v", "int"), Map.of("$literal", 9))))));
        assertEquals(List.of("d"), ids(lab.viewer(), p,
                where(Map.of("$eq", List.of(convert("inputs.x", "exists"), Map.of("$literal", false))))));
        assertEquals(List.of("c"), ids(lab.viewer(), p, where(Map.of("$in",
                List.of(convert("output.v", "string"), List.of(Map.of("$literal", "abc"), Map.of("$literal", "x")))))));
        assertEquals(List.of("a"), ids(lab.viewer(), p, where(
                Map.of("$gte", List.of(convert("summary.weave.latency_ms", "double"), Map.of("$literal", 2500))))));
        // a conversion the interface does not have is refused by the contract, naming it
        json(lab.viewer())
                .body(Map.of("project_id", p, "query",
                        Map.of("$expr", Map.of("$eq", List.of(convert("output.v", "float"), Map.of("$literal", 1))))))
                .post("/calls/stream_query").then().statusCode(422);

        // feedback in summary.weave.feedback, when asked; an outsider is refused first
        json(lab.member()).body(Map.of("project_id", p, "weave_ref", "weave:///" + p + "/call/a", "feedback_type",
                "wandb.note.1", "payload", Map.of("note", "first"))).post("/feedback/create").then().statusCode(200);
        json(lab.outsider()).body(Map.of("project_id", p, "include_feedback", true)).post("/calls/stream_query").then()
                .statusCode(403);
        String lines = json(lab.viewer())
                .body(Map.of("project_id", p, "include_feedback", true, "columns", List.of("output"), "sort_by",
                        List.of(Map.of("field", "id", "direction", "asc"))))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        String[] rows = lines.split("\n");
        com.fasterxml.jackson.databind.JsonNode feedback = mapper.readTree(rows[0]).at("/summary/weave/feedback");
        assertEquals(1, feedback.size(), rows[0]);
        assertEquals("wandb.note.1", feedback.get(0).get("feedback_type").textValue());
        assertEquals("first", feedback.get(0).at("/payload/note").textValue());
        assertEquals(p, feedback.get(0).get("project_id").textValue());
        assertEquals(lab.member().name(), feedback.get(0).get("wb_user_id").textValue());
        assertEquals(0, mapper.readTree(rows[1]).at("/summary/weave/feedback").size(), rows[1]);
        // without it, no feedback
        String plain = json(lab.viewer()).body(Map.of("project_id", p, "filter", Map.of("call_ids", List.of("a"))))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        assertEquals(true, mapper.readTree(plain).at("/summary/weave/feedback").isMissingNode(), plain);
    }
}

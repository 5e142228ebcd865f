package dev.fulcrum.datasets;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * The official Python {@code weave} SDK from PyPI (pinned in {@code src/test/python/requirements.txt}), unchanged,
 * against this server: {@code src/test/python/weave_sdk/datasets_e2e.py} publishes a 10,000-row dataset and reads it
 * back keys in order, adds rows, runs an evaluation with two scorers, adds feedback and publishes a prompt and a model;
 * this test then reads what it wrote through the v2 datasets API and {@code /calls/stream_query}, every response
 * checked against openapi/datasets.yaml.
 */
@QuarkusTest
class WeavePythonSdkTest {

    static final String SCRIPT = "weave_sdk/datasets_e2e.py";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    private Map<String, String> env(Account account, String project, String mode) {
        String url = base.toString().replaceAll("/$", "");
        return Map.of("WF_TRACE_SERVER_URL", url, "WANDB_BASE_URL", url, "WANDB_API_KEY", account.key(), "PROJECT",
                project, "MODE", mode, "WEAVE_USE_SERVER_CACHE", "false", "WEAVE_DISABLE_ANALYTICS", "true",
                "WANDB_DIR", java.nio.file.Path.of("target", "py-clients").toAbsolutePath().toString());
    }

    @Test
    void whatThePythonSdkPublishesAndTracesReadsBackThroughTheApi() throws Exception {
        Account member = fixtures.user("weave-py");
        PlatformEntity team = fixtures.team("weave-py-lab", fixtures.user("weave-py-admin"));
        fixtures.member(team, member, Role.MEMBER);
        Account viewer = fixtures.user("weave-py-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        String project = team.name + "/evals";

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(10), env(member, project, "member"));
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath run = JsonPath.from(result.group(1));
        assertEquals(List.of("zeta", "question", "answer", "meta", "alpha"), run.getList("big_keys"));

        // the v2 read agrees with what the SDK published: digest, version index, and the rows with keys in order
        String digest = run.getString("big_digest");
        JsonPath dataset = DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/big-set/versions/latest")
                .then().statusCode(200).body("digest", equalTo(digest)).body("version_index", equalTo(0)).extract()
                .jsonPath();
        String table = dataset.getString("rows").substring(dataset.getString("rows").lastIndexOf('/') + 1);
        String lines = DatasetsClient.as(viewer.key()).queryParam("limit", 10_000)
                .get("/v2/" + project + "/tables/" + table + "/rows").then().statusCode(200).extract().asString();
        String[] rows = lines.split("\n");
        assertEquals(10_000, rows.length);
        assertTrue(rows[7].contains("\"val\":{\"zeta\": 7, \"question\": "), rows[7]);
        assertTrue(rows[7].contains("\"nested\": {\"b\": 1, \"a\": [1.5, null, true]}"), rows[7]);

        // add_rows made version 1 of small-set, 4 rows
        DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/small-set/versions/latest").then()
                .statusCode(200).body("version_index", equalTo(1));

        // every call the script traced, through /calls/stream_query
        int calls = run.getInt("calls");
        String all = DatasetsClient.as(viewer.key()).contentType(ContentType.JSON).body(Map.of("project_id", project))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        assertEquals(run.getInt("all_calls"), all.split("\n").length);
        // evaluate, 100 x (predict_and_score, adder, exact, length), summarize
        assertTrue(calls >= 1 + 100 * 4 + 1, "calls: " + calls);
        String evaluateId = run.getString("evaluate_id");
        String evaluate = DatasetsClient.as(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "filter", Map.of("call_ids", List.of(evaluateId)), "columns",
                        List.of("output", "summary")))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        JsonPath call = JsonPath.from(evaluate.trim());
        assertEquals(80, call.getInt("output.exact.correct.true_count"));
        assertEquals("success", call.getString("summary.weave.status"));
        long scored = DatasetsClient.as(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "filter",
                        Map.of("op_names", List.of("weave:///" + project + "/op/exact:*"))))
                .post("/calls/query_stats").then().statusCode(200).extract().jsonPath().getLong("count");
        assertEquals(100, scored);
        DatasetsClient.as(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "query", Map.of("$expr",
                        Map.of("$eq",
                                List.of(Map.of("$getField", "display_name"), Map.of("$literal", "renamed-eval"))))))
                .post("/calls/query_stats").then().statusCode(200).body("count", equalTo(1));

        // feedback the SDK added, read by a viewer
        DatasetsClient.as(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "query",
                        Map.of("$expr",
                                Map.of("$eq",
                                        List.of(Map.of("$getField", "weave_ref"),
                                                Map.of("$literal", "weave:///" + project + "/call/" + evaluateId))))))
                .post("/feedback/query").then().statusCode(200).body("result.size()", equalTo(2));

        // what the SDK published as a list, a text and a number reads back through /obj/read as it was sent, with the
        // digests the SDK computed itself
        Map<String, Object> values = Map.of("a-list", List.of(1, "two"), "a-text", "text", "a-number", 3.5f);
        values.forEach((name, value) -> DatasetsClient.asBasic(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "object_id", name, "digest", "latest")).post("/obj/read").then()
                .statusCode(200).body("obj.val", equalTo(value))
                .body("obj.digest", equalTo(run.getString("published.'" + name + "'"))));
        // the call the SDK reacted to carries the reaction when a query includes feedback
        String reacted = DatasetsClient.as(viewer.key()).contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "filter",
                        Map.of("call_ids", List.of(run.getString("reacted_call"))), "include_feedback", true))
                .post("/calls/stream_query").then().statusCode(200).extract().asString();
        assertEquals(List.of("wandb.reaction.1"),
                JsonPath.from(reacted.trim()).getList("summary.weave.feedback.feedback_type"));

        // a viewer's publish is refused with the SDK's own error
        String refused = PythonClients.run(SCRIPT, Duration.ofMinutes(3), env(viewer, project, "viewer"));
        assertTrue(refused.contains("REFUSED ") && refused.contains("member role"), refused);
    }
}

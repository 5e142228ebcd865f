package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.create;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

@QuarkusTest
class DatasetLifecycleTest {

    @Inject
    Fixtures fixtures;

    @Inject
    ObjectMapper mapper;

    private Account owner;
    private String project;

    @BeforeEach
    void newOwner() {
        owner = fixtures.user("owner");
        project = owner.name() + "/evals";
    }

    @Test
    void firstWriteCreatesTheProjectAndIdenticalContentReturnsTheSameVersion() {
        var first = create(owner.key(), project, "Grammar set", rows(3, "g")).then().statusCode(200)
                .body("object_id", equalTo("grammar_set")).body("version_index", equalTo(0)).extract();
        create(owner.key(), project, "Grammar set", rows(3, "g")).then().statusCode(200)
                .body("digest", equalTo(first.path("digest"))).body("version_index", equalTo(0));
        create(owner.key(), project, "Grammar set", rows(4, "g")).then().statusCode(200).body("version_index",
                equalTo(1));
        as(owner.key()).get("/v2/" + project + "/datasets/grammar_set/versions/latest").then().statusCode(200)
                .body("version_index", equalTo(1)).body("name", equalTo("Grammar set"))
                .body("description", nullValue());
    }

    @Test
    void unnamedDatasetIsCalledDatasetAndObjectIdsAreSanitized() {
        create(owner.key(), project, null, rows(1, "x")).then().statusCode(200).body("object_id", equalTo("dataset"));
        create(owner.key(), project, "Team A/Eval Set", rows(1, "x")).then().statusCode(200).body("object_id",
                equalTo("team_a_eval_set"));
    }

    @Test
    void rowsReferenceReadsTheRowsInOrderThroughBothTableEndpoints() throws Exception {
        String digest = create(owner.key(), project, "ordered", rows(25, "o")).then().statusCode(200).extract()
                .path("digest");
        String ref = as(owner.key()).get("/v2/" + project + "/datasets/ordered/versions/" + digest).then()
                .statusCode(200).extract().path("rows");
        String table = ref.substring(ref.lastIndexOf('/') + 1);
        assertEquals("weave:///" + project + "/table/" + table, ref);

        String jsonl = as(owner.key()).queryParam("offset", 5).queryParam("limit", 10)
                .get("/v2/" + project + "/tables/" + table + "/rows").then().statusCode(200)
                .contentType("application/jsonl").extract().asString();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : jsonl.split("\n")) {
            lines.add(mapper.readTree(line));
        }
        assertEquals(10, lines.size());
        for (int i = 0; i < 10; i++) {
            assertEquals(5 + i, lines.get(i).get("original_index").asInt());
            assertEquals("o question " + (5 + i), lines.get(i).get("val").get("question").asText());
            assertEquals(5 + i, lines.get(i).get("val").get("answer").asInt());
        }

        as(owner.key()).contentType(ContentType.JSON).body(Map.of("project_id", project, "digest", table, "offset", 20))
                .post("/table/query").then().statusCode(200).body("rows", hasSize(5))
                .body("rows[0].original_index", equalTo(20))
                .body("rows[0].digest", equalTo(rowDigestAt(owner.key(), project, table, 20)))
                .body("rows[4].val.question", equalTo("o question 24"));
    }

    private static String rowDigestAt(String key, String project, String table, int index) {
        String line = as(key).queryParam("offset", index).queryParam("limit", 1)
                .get("/v2/" + project + "/tables/" + table + "/rows").then().statusCode(200).extract().asString();
        return line.substring(line.indexOf("\"digest\":\"") + 10, line.indexOf("\",\"val\""));
    }

    @Test
    void theSpecVectorRowGetsItsWeaveDigest() {
        String digest = create(owner.key(), project, "vector",
                List.of(Map.of("question", "What is 2+2?", "answer", "4"))).then().statusCode(200).extract()
                        .path("digest");
        String ref = as(owner.key()).get("/v2/" + project + "/datasets/vector/versions/" + digest).then().extract()
                .path("rows");
        as(owner.key()).get("/v2/" + project + "/tables/" + ref.substring(ref.lastIndexOf('/') + 1) + "/rows").then()
                .statusCode(200).body(org.hamcrest.Matchers
                        .containsString("\"digest\":\"xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ\""));
    }

    @Test
    void listStreamsTheLatestVersionOfEachDatasetAsJsonLines() throws Exception {
        create(owner.key(), project, "beta", rows(1, "b")).then().statusCode(200);
        create(owner.key(), project, "alpha", rows(1, "a")).then().statusCode(200);
        create(owner.key(), project, "alpha", rows(2, "a")).then().statusCode(200);
        String body = as(owner.key()).get("/v2/" + project + "/datasets").then().statusCode(200)
                .contentType("application/jsonl").extract().asString();
        String[] lines = body.strip().split("\n");
        assertEquals(2, lines.length);
        JsonNode alpha = mapper.readTree(lines[0]);
        assertEquals("alpha", alpha.get("object_id").asText());
        assertEquals(1, alpha.get("version_index").asInt());
        assertEquals("beta", mapper.readTree(lines[1]).get("object_id").asText());

        String page = as(owner.key()).queryParam("limit", 1).queryParam("offset", 1).get("/v2/" + project + "/datasets")
                .then().statusCode(200).extract().asString();
        assertEquals("beta", mapper.readTree(page.strip()).get("object_id").asText());
    }

    @Test
    void deleteNamedVersionsOrAllAndRecreatingRestoresTheIndex() {
        String v0 = create(owner.key(), project, "gone", rows(1, "d")).then().extract().path("digest");
        create(owner.key(), project, "gone", rows(2, "d")).then().statusCode(200);
        create(owner.key(), project, "gone", rows(3, "d")).then().statusCode(200);

        as(owner.key()).queryParam("digests", v0).delete("/v2/" + project + "/datasets/gone").then().statusCode(200)
                .body("num_deleted", equalTo(1));
        as(owner.key()).get("/v2/" + project + "/datasets/gone/versions/" + v0).then().statusCode(404).body("detail",
                org.hamcrest.Matchers.containsString("not found"));
        as(owner.key()).queryParam("digests", "v1,latest").queryParam("digests", "v9")
                .delete("/v2/" + project + "/datasets/gone").then().statusCode(404);
        as(owner.key()).get("/v2/" + project + "/datasets/gone/versions/v1").then().statusCode(200);

        create(owner.key(), project, "gone", rows(1, "d")).then().statusCode(200).body("version_index", equalTo(0))
                .body("digest", equalTo(v0));
        as(owner.key()).delete("/v2/" + project + "/datasets/gone").then().statusCode(200).body("num_deleted",
                equalTo(3));
        as(owner.key()).get("/v2/" + project + "/datasets/gone/versions/latest").then().statusCode(404);
        as(owner.key()).delete("/v2/" + project + "/datasets/gone").then().statusCode(404);
        create(owner.key(), project, "gone", rows(9, "d")).then().statusCode(200).body("version_index", equalTo(3));
    }

    @Test
    void concurrentCreatesOfOneNameGetDistinctGapFreeIndexes() throws Exception {
        int writers = 12;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Callable<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                int n = i;
                calls.add(() -> create(owner.key(), project, "raced", rows(2, "writer " + n)).then().statusCode(200)
                        .extract().path("version_index"));
            }
            calls.add(() -> create(owner.key(), project, "raced", rows(2, "writer 0")).then().statusCode(200).extract()
                    .path("version_index"));
            Set<Integer> indexes = new TreeSet<>();
            List<Integer> all = new ArrayList<>();
            for (Future<Integer> f : pool.invokeAll(calls)) {
                all.add(f.get());
                indexes.add(f.get());
            }
            assertEquals(writers, indexes.size(), "identical content must share a version: " + all);
            assertEquals(new TreeSet<>(java.util.stream.IntStream.range(0, writers).boxed().toList()), indexes);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sameRowsInAnotherProjectGiveAnotherObjectDigestButTheSameTable() {
        String a = create(owner.key(), project, "shared", rows(5, "s")).then().extract().path("digest");
        String b = create(owner.key(), owner.name() + "/other", "shared", rows(5, "s")).then().extract().path("digest");
        assertNotEquals(a, b);
        String refA = as(owner.key()).get("/v2/" + project + "/datasets/shared/versions/latest").then().extract()
                .path("rows");
        String refB = as(owner.key()).get("/v2/" + owner.name() + "/other/datasets/shared/versions/latest").then()
                .extract().path("rows");
        assertEquals(refA.substring(refA.lastIndexOf('/')), refB.substring(refB.lastIndexOf('/')));
        // a table is readable only through a project that has a dataset on it
        Account stranger = fixtures.user("stranger");
        create(stranger.key(), stranger.name() + "/p", "mine", rows(1, "m")).then().statusCode(200);
        as(stranger.key()).get("/v2/" + stranger.name() + "/p/tables" + refA.substring(refA.lastIndexOf('/')) + "/rows")
                .then().statusCode(404);
    }
}

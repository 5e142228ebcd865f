package dev.fulcrum.runs;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.matchesPattern;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

@QuarkusTest
class RunsTest extends LabTest {

    private String runs;

    static RequestSpecification as(Account account) {
        RequestSpecification spec = given().filter(Contract.RUNS).contentType(ContentType.JSON);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    @BeforeEach
    void paths() {
        runs = "/api/v1/entities/" + team.name + "/projects/mnist/runs";
    }

    @Test
    void aMemberCreatesARunAndTheProjectOnTheFirstWrite() {
        as(member).body(Map.of("name", "baseline", "display_name", "Baseline", "config", Map.of("lr", 0.001)))
                .post(runs).then().statusCode(201).body("name", equalTo("baseline"))
                .body("display_name", equalTo("Baseline")).body("state", equalTo("running"))
                .body("config.lr", equalTo(0.001f)).body("created_by", equalTo(member.name()))
                .body("last_step", equalTo(-1)).body("history_rows", equalTo(0));
        as(viewer).get(runs + "/baseline").then().statusCode(200).body("project", equalTo("mnist"));
        as(member).post(runs).then().statusCode(201).body("name", matchesPattern("[a-z0-9]{8}")).body("config",
                equalTo(Map.of()));
    }

    @Test
    void duplicateAndInvalidNamesAreRefused() {
        as(member).body(Map.of("name", "twice")).post(runs).then().statusCode(201);
        as(member).body(Map.of("name", "twice")).post(runs).then().statusCode(409)
                .contentType("application/problem+json").body("detail", containsString("twice"));
        for (String bad : List.of("", "-leading", "has space", "slash/name", "x".repeat(129))) {
            as(member).body(Map.of("name", bad)).post(runs).then().statusCode(422).body("errors[0].field",
                    equalTo("name"));
        }
        as(member).body(Map.of("name", "ok", "display_name", "d".repeat(257))).post(runs).then().statusCode(422);
        as(member).body(Map.of("name", "cfg", "config", List.of(1))).post(runs).then().statusCode(422);
        as(member).body("{\"name\": \"cfg\", \"config\": {\"lr\": [1e999]}}").post(runs).then().statusCode(422)
                .body("errors[0].field", equalTo("config"));
        as(member).get(runs + "/nothing-here").then().statusCode(404);
        as(member).get(runs + "/bad name").then().statusCode(422);
    }

    @Test
    void permissions() {
        as(member).body(Map.of("name", "r1")).post(runs).then().statusCode(201);
        as(null).get(runs).then().statusCode(401);
        as(null).body(Map.of("name", "r2")).post(runs).then().statusCode(401);
        as(outsider).get(runs).then().statusCode(403);
        as(outsider).get(runs + "/r1/summary").then().statusCode(403);
        as(outsider).body(Map.of("name", "r2")).post(runs).then().statusCode(403);
        as(viewer).body(Map.of("name", "r2")).post(runs).then().statusCode(403);
        as(viewer).body(Map.of("state", "killed")).patch(runs + "/r1").then().statusCode(403);
        as(viewer).body(List.of(Map.of("loss", 1))).post(runs + "/r1/history").then().statusCode(403);
        as(viewer).get(runs).then().statusCode(200).body("runs.name", contains("r1"));
        as(viewer).get(runs + "/r1/history").then().statusCode(200);
        as(viewer).get(runs + "/r1/summary").then().statusCode(200);
        as(admin).body(Map.of("state", "finished")).patch(runs + "/r1").then().statusCode(200);
        as(viewer).get(runs.replace("/mnist/", "/unknown-project/")).then().statusCode(404);
        as(viewer).get("/api/v1/entities/no-such-entity/projects/p/runs").then().statusCode(404);
    }

    @Test
    void stateChangesAndListFilters() {
        as(member).body(Map.of("name", "sweep-1")).post(runs).then().statusCode(201);
        as(member).body(Map.of("name", "sweep-2")).post(runs).then().statusCode(201);
        as(admin).body(Map.of("name", "eval-1")).post(runs).then().statusCode(201);
        as(member).body(Map.of("state", "finished", "display_name", "done")).patch(runs + "/sweep-1").then()
                .statusCode(200).body("state", equalTo("finished")).body("display_name", equalTo("done"));
        as(member).body(Map.of("state", "exploded")).patch(runs + "/sweep-2").then().statusCode(422)
                .body("errors[0].field", equalTo("state"));

        as(viewer).get(runs).then().statusCode(200).body("runs.name", contains("eval-1", "sweep-2", "sweep-1"))
                .body("next_offset", nullValue());
        as(viewer).queryParam("name", "^sweep-\\d$").get(runs).then().body("runs.name", contains("sweep-2", "sweep-1"));
        as(viewer).queryParam("creator", admin.name()).get(runs).then().body("runs.name", contains("eval-1"));
        as(viewer).queryParam("state", "finished").get(runs).then().body("runs.name", contains("sweep-1"));
        as(viewer).queryParam("name", "sweep").queryParam("state", "running").get(runs).then().body("runs.name",
                contains("sweep-2"));
        as(viewer).queryParam("limit", 2).get(runs).then().body("runs.name", contains("eval-1", "sweep-2"))
                .body("next_offset", equalTo(2));
        as(viewer).queryParam("limit", 2).queryParam("offset", 2).get(runs).then()
                .body("runs.name", contains("sweep-1")).body("next_offset", nullValue());
        as(viewer).queryParam("name", "(unclosed").get(runs).then().statusCode(422).body("errors[0].field",
                equalTo("name"));
        as(viewer).queryParam("state", "sleeping").get(runs).then().statusCode(422);
        as(viewer).queryParam("limit", 0).get(runs).then().statusCode(422);
        as(viewer).queryParam("limit", "many").get(runs).then().statusCode(422);
    }

    /**
     * A viewer's name filter is held to the automations' rule for a regex (issue 23): a 23-character filter of nested
     * counted repetitions used to compile to a billion instructions and run the server out of memory.
     */
    @Test
    void aNameFilterThatWouldCompileTooLargeIsRefusedBeforeCompiling() {
        as(member).body(Map.of("name", "sweep-9")).post(runs).then().statusCode(201);
        for (String regex : List.of("((a{1000}){1000}){1000}", "((a{100}){100}){100}", "(abcdef){1000}")) {
            as(viewer).queryParam("name", regex).get(runs).then().statusCode(422)
                    .contentType("application/problem+json").body("errors[0].field", equalTo("name"))
                    .body("errors[0].message", containsString("5000 RE2 instructions"));
        }
        as(viewer).queryParam("name", "a".repeat(1025)).get(runs).then().statusCode(422).body("errors[0].message",
                equalTo("Must be at most 1024 characters"));
        as(viewer).queryParam("name", "^sweep-\\d{1,3}$").get(runs).then().statusCode(200).body("runs.name",
                contains("sweep-9"));
    }

    @Test
    void aRunsStateChangesAreListedOldestFirstWithWhoChangedThem() {
        as(member).body(Map.of("name", "lifecycle")).post(runs).then().statusCode(201);
        as(member).body(Map.of("name", "other")).post(runs).then().statusCode(201);
        as(member).body(Map.of("state", "crashed")).patch(runs + "/lifecycle").then().statusCode(200);
        as(member).body(Map.of("display_name", "renamed only")).patch(runs + "/lifecycle").then().statusCode(200);
        as(admin).body(Map.of("state", "running")).patch(runs + "/lifecycle").then().statusCode(200);
        as(admin).body(Map.of("state", "finished")).patch(runs + "/lifecycle").then().statusCode(200);
        as(admin).body(Map.of("state", "killed")).patch(runs + "/other").then().statusCode(200);

        as(viewer).get(runs + "/lifecycle/states").then().statusCode(200)
                .body("changes.state", contains("running", "crashed", "running", "finished"))
                .body("changes.previous_state", contains(null, "running", "crashed", "running"))
                .body("changes.changed_by", contains(member.name(), member.name(), admin.name(), admin.name()))
                .body("changes[0].changed_at",
                        equalTo(as(viewer).get(runs + "/lifecycle").then().extract().path("created_at")));
        as(viewer).get(runs + "/other/states").then().statusCode(200).body("changes.state",
                contains("running", "killed"));
        as(outsider).get(runs + "/lifecycle/states").then().statusCode(403);
        as(null).get(runs + "/lifecycle/states").then().statusCode(401);
        as(viewer).get(runs + "/nothing-here/states").then().statusCode(404);
    }

    @Test
    void historyIsStoredInOrderPagedFilteredAndSummarized() {
        as(member).body(Map.of("name", "train")).post(runs).then().statusCode(201);
        as(member)
                .body(List.of(Map.of("_step", 0, "loss", 0.9, "acc", 0.1), Map.of("loss", 0.7),
                        Map.of("_step", 5, "loss", 0.5, "acc", 0.6)))
                .post(runs + "/train/history").then().statusCode(200).body("rows", equalTo(3))
                .body("values", equalTo(5)).body("last_step", equalTo(5));
        as(member).body(List.of(Map.of("lr", 0.01))).post(runs + "/train/history").then().statusCode(200)
                .body("last_step", equalTo(6));

        as(viewer).get(runs + "/train/history").then().statusCode(200).body("rows._step", contains(0, 1, 5, 6))
                .body("rows[1].loss", equalTo(0.7f)).body("next_offset", nullValue());
        as(viewer).queryParam("keys", "acc").get(runs + "/train/history").then().body("rows._step", contains(0, 5))
                .body("rows[0]", not(hasKey("loss")));
        as(viewer).queryParam("keys", "acc,lr").get(runs + "/train/history").then().body("rows._step",
                contains(0, 5, 6));
        as(viewer).queryParam("keys", "acc").queryParam("keys", "lr").get(runs + "/train/history").then()
                .body("rows._step", contains(0, 5, 6));
        as(viewer).queryParam("limit", 2).queryParam("offset", 1).get(runs + "/train/history").then()
                .body("rows._step", contains(1, 5)).body("next_offset", equalTo(3));
        as(viewer).get(runs + "/train/summary").then().statusCode(200).body("loss", equalTo(0.5f))
                .body("acc", equalTo(0.6f)).body("lr", equalTo(0.01f)).body("_step", equalTo(6));
        as(viewer).get(runs + "/train").then().body("last_step", equalTo(6)).body("history_rows", equalTo(4));
    }

    @Test
    void aValueThatIsNotANumberRejectsTheWholeBatchNamingRowAndKey() {
        as(member).body(Map.of("name", "strict")).post(runs).then().statusCode(201);
        as(member).body(List.of(Map.of("loss", 0.3), Map.of("loss", "high"))).post(runs + "/strict/history").then()
                .statusCode(422).contentType("application/problem+json").body("errors[0].field", equalTo("[1].loss"))
                .body("detail", containsString("Row 1, key 'loss'"));
        as(member).body(List.of(Map.of("ok", true))).post(runs + "/strict/history").then().statusCode(422)
                .body("errors[0].field", equalTo("[0].ok"));
        as(member).body("[{\"n\": null}]").post(runs + "/strict/history").then().statusCode(422).body("errors[0].field",
                equalTo("[0].n"));
        as(member).body(List.of(Map.of("nested", Map.of("a", 1)))).post(runs + "/strict/history").then()
                .statusCode(422);
        as(member).body(List.of(Map.of("_step", -1, "loss", 1))).post(runs + "/strict/history").then().statusCode(422)
                .body("errors[0].field", equalTo("[0]._step"));
        as(member).body(List.of(Map.of("_step", 1.5))).post(runs + "/strict/history").then().statusCode(422);
        as(member).body("[{\"huge\": 1e400}]").post(runs + "/strict/history").then().statusCode(422)
                .body("errors[0].field", equalTo("[0].huge"));
        as(member).body("[{\"big\": 100000000000000000000000000000}]").post(runs + "/strict/history").then()
                .statusCode(200);
        as(member).body("[1, 2]").post(runs + "/strict/history").then().statusCode(422);
        as(member).body("{\"loss\": 1}").post(runs + "/strict/history").then().statusCode(422);
        as(member).body("[{\"loss\": 1").post(runs + "/strict/history").then().statusCode(422);
        as(member).body(List.of(Map.of("loss", 1))).post(runs + "/nope/history").then().statusCode(404);
        as(viewer).get(runs + "/strict/history").then().body("rows", hasSize(1));
        as(viewer).get(runs + "/strict/summary").then().body("_step", equalTo(0))
                .body(containsString("\"big\":100000000000000000000000000000"));
    }

    @Test
    void concurrentBatchesIntoOneRunAreAllKept() throws Exception {
        as(member).body(Map.of("name", "parallel")).post(runs).then().statusCode(201);
        int writers = 6;
        int rowsEach = 50;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                List<Map<String, Object>> batch = IntStream.range(0, rowsEach)
                        .mapToObj(i -> Map.<String, Object> of("loss", i)).toList();
                results.add(pool.submit(() -> as(member).body(batch).post(runs + "/parallel/history").statusCode()));
            }
            for (Future<Integer> result : results) {
                assertEquals(200, result.get());
            }
        } finally {
            pool.shutdown();
        }
        List<Integer> steps = as(viewer).queryParam("limit", 1000).get(runs + "/parallel/history").then()
                .statusCode(200).extract().path("rows._step");
        assertEquals(writers * rowsEach, steps.size());
        assertEquals(writers * rowsEach, new HashSet<>(steps).size());
        as(viewer).get(runs + "/parallel").then().body("history_rows", equalTo(writers * rowsEach)).body("last_step",
                equalTo(writers * rowsEach - 1));
    }
}

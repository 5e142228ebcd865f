package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * {@code project { runs, runCount }} and the history reads of {@code scan_history} as the SDK sends them: who may list
 * (a project's viewers; nobody else sees it), filters and their refusals in GraphQL's shape, pages by cursor, step
 * ranges. The SDK itself runs them in {@link WandbApiSdkTest}.
 */
@QuarkusTest
class WandbRunListsTest {

    static final String RUNS = """
            query Runs($project: String!, $entity: String!, $cursor: String, $perPage: Int = 50, $order: String,
                $filters: JSONString) {
              project(name: $project, entityName: $entity) {
                internalId runCount(filters: $filters) readOnly
                runs(filters: $filters, after: $cursor, first: $perPage, order: $order) {
                  edges { node { id name displayName state tags createdAt heartbeatAt historyLineCount } cursor }
                  pageInfo { endCursor hasNextPage }
                }
              }
            }""";

    @Inject
    Fixtures fixtures;

    private Map<String, Object> vars(String entity, String project, Object... pairs) {
        Map<String, Object> vars = new HashMap<>();
        vars.put("entity", entity);
        vars.put("project", project);
        for (int i = 0; i < pairs.length; i += 2) {
            vars.put((String) pairs[i], pairs[i + 1]);
        }
        return vars;
    }

    private void run(Account member, String entity, String project, String name, double lr, String state) {
        String runs = "/api/v1/entities/" + entity + "/projects/" + project + "/runs";
        WandbSdkTest.as(member, Contract.RUNS).body(Map.of("name", name, "config", Map.of("lr", lr, "opt", "adam")))
                .post(runs).then().statusCode(201);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int step = 0; step < 10; step++) {
            Map<String, Object> row = new HashMap<>();
            row.put("loss", lr / (step + 1));
            if (step % 3 == 0) {
                row.put("acc", step / 10.0);
            }
            rows.add(row);
        }
        WandbSdkTest.as(member, Contract.RUNS).body(rows).post(runs + "/" + name + "/history").then().statusCode(200);
        WandbSdkTest.as(member, Contract.RUNS).body(Map.of("state", state)).patch(runs + "/" + name).then()
                .statusCode(200);
    }

    @Test
    void viewersListFilteredOrderedPagesAndOthersSeeNothing() {
        Account member = fixtures.user("list");
        PlatformEntity team = fixtures.team("list-team", member);
        Account viewer = fixtures.user("list-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        Account stranger = fixtures.user("list-stranger");
        String project = "listed";
        run(member, team.name, project, "r1", 0.001, "finished");
        run(member, team.name, project, "r2", 0.02, "finished");
        run(member, team.name, project, "r3", 0.05, "failed");

        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project)).then().statusCode(200)
                .body("data.project.runCount", equalTo(3)).body("data.project.readOnly", equalTo(true))
                .body("data.project.runs.edges.node.name", contains("r1", "r2", "r3"))
                .body("data.project.runs.edges[0].node.historyLineCount", equalTo(10));
        WandbGraphqlTest
                .graphql(viewer, RUNS,
                        vars(team.name, project, "filters",
                                "{\"$or\": [{\"state\": \"failed\"}, {\"config.lr\": {\"$lt\": 0.01}}]}", "order",
                                "-summary_metrics.loss"))
                .then().statusCode(200).body("data.project.runCount", equalTo(2))
                .body("data.project.runs.edges.node.name", contains("r3", "r1"));
        WandbGraphqlTest
                .graphql(viewer, RUNS,
                        vars(team.name, project, "filters", "{\"name\": {\"$regex\": \"[23]$\"}}", "order", "-name"))
                .then().statusCode(200).body("data.project.runs.edges.node.name", contains("r3", "r2"));
        // pages of one: the cursor of the last run of a page is where the next begins
        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "perPage", 1, "cursor", "1")).then()
                .statusCode(200).body("data.project.runs.edges.node.name", contains("r2"))
                .body("data.project.runs.pageInfo.endCursor", equalTo("2"))
                .body("data.project.runs.pageInfo.hasNextPage", equalTo(true));
        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "perPage", 1, "cursor", "2")).then()
                .statusCode(200).body("data.project.runs.pageInfo.hasNextPage", equalTo(false));

        // refusals name what is not served, in GraphQL's shape
        for (String[] refused : new String[][] { { "{\"state\": {\"$nor\": 1}}", "$nor" },
                { "{\"group\": \"a\"}", "group" }, { "{\"config.lr\": {\"$gt\": true}}", "$gt" },
                { "{\"name\": {\"$regex\": \"((a{1000}){1000}){1000}\"}}", "too large" },
                { "{\"state\": \"a\\u0000\"}", "NUL" }, { "[1]", "JSON object" }, { "{\"$and\": 1}", "$and" } }) {
            WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "filters", refused[0])).then()
                    .statusCode(200).body("errors[0].message", containsString(refused[1]))
                    .body("errors[0].extensions.status", equalTo(422)).body("data.project.runs", nullValue());
        }
        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "order", "-tags")).then().statusCode(200)
                .body("errors[0].message", containsString("tags"));
        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "perPage", 5000)).then().statusCode(200)
                .body("errors[0].extensions.status", equalTo(422));
        WandbGraphqlTest.graphql(viewer, RUNS, vars(team.name, project, "cursor", "x")).then().statusCode(200)
                .body("errors[0].extensions.status", equalTo(422));

        // someone with no role on the team's project sees no runs
        WandbGraphqlTest.graphql(stranger, RUNS, vars(team.name, project)).then().body("data.project", nullValue())
                .body("errors", hasSize(1));
    }

    @Test
    void scanHistoryReadsStepRanges() {
        Account member = fixtures.user("scan");
        PlatformEntity team = fixtures.team("scan-team", member);
        run(member, team.name, "scanned", "s1", 1.0, "finished");
        String query = """
                query Scan($entity: String!, $project: String!, $run: String!, $spec: JSONString!) {
                  project(name: $project, entityName: $entity) {
                    run(name: $run) {
                      parquetHistory(liveKeys: ["_step"]) { parquetUrls liveData }
                      history(minStep: 3, maxStep: 6, samples: 3)
                      sampledHistory(specs: [$spec])
                    }
                  }
                }""";
        WandbGraphqlTest
                .graphql(member, query, vars(team.name, "scanned", "run", "s1", "spec",
                        "{\"keys\": [\"loss\", \"acc\", \"_step\"], \"minStep\": 2, \"maxStep\": 9, \"samples\": 8}"))
                .then().statusCode(200).body("data.project.run.parquetHistory.parquetUrls", hasSize(0))
                .body("data.project.run.parquetHistory.liveData", hasSize(10))
                .body("data.project.run.parquetHistory.liveData[0]", equalTo(Map.of("_step", 0)))
                .body("data.project.run.history", hasSize(3))
                .body("data.project.run.history[0]", containsString("\"_step\":3"))
                .body("data.project.run.sampledHistory[0]._step", contains(3, 6, 9));
    }
}

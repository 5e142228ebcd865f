package dev.fulcrum.training;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.startsWith;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

/** Registering models, their untrained checkpoint, listing, logging and deleting; who may do what. */
@QuarkusTest
class TrainingModelsTest extends LabTest {

    static RequestSpecification as(Account account) {
        return given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(account.key());
    }

    static Map<String, Object> model(String team, String name) {
        Map<String, Object> body = new HashMap<>();
        body.put("entity", team);
        body.put("project", "agents");
        body.put("name", name);
        body.put("base_model", "fulcrum-tiny");
        return body;
    }

    @Test
    void registeringCreatesTheRunAndTheUntrainedCheckpoint() {
        String id = as(member).body(model(team.name, "agent-001")).post("/v1/preview/models").then().statusCode(201)
                .body("entity", equalTo(team.name)).body("project", equalTo("agents"))
                .body("name", equalTo("agent-001")).body("base_model", equalTo("fulcrum-tiny"))
                .body("id", startsWith("model_")).extract().path("id");
        String run = as(member).get("/v1/preview/models/" + id).then().statusCode(200).extract().path("run_id");

        as(member).get("/v1/preview/models/" + id + "/checkpoints").then().statusCode(200)
                .body("object", equalTo("list")).body("data", hasSize(1)).body("data[0].step", equalTo(0))
                .body("data[0].id", equalTo(id + ":step0")).body("data[0].metrics", equalTo(Map.of()))
                .body("data[0].artifact", equalTo("wandb-artifact:///" + team.name + "/agents/agent-001:step0"))
                .body("has_more", equalTo(false));
        given().filter(Contract.ARTIFACTS).auth().oauth2(viewer.key())
                .get("/api/v1/entities/" + team.name
                        + "/projects/agents/artifacts/collections/agent-001/versions/latest")
                .then().statusCode(200).body("type", equalTo("lora")).body("aliases", hasItems("latest", "step0"))
                .body("files.path", contains("model.bin"));
        given().filter(Contract.RUNS).auth().oauth2(viewer.key())
                .get("/api/v1/entities/" + team.name + "/projects/agents/runs/" + run).then().statusCode(200)
                .body("display_name", equalTo("agent-001")).body("config.base_model", equalTo("fulcrum-tiny"));
    }

    @Test
    void returnExistingOrConflict() {
        String id = as(member).body(model(team.name, "twice")).post("/v1/preview/models").then().statusCode(201)
                .extract().path("id");
        Map<String, Object> again = model(team.name, "twice");
        again.put("return_existing", true);
        as(member).body(again).post("/v1/preview/models").then().statusCode(200).body("id", equalTo(id));
        as(member).body(model(team.name, "twice")).post("/v1/preview/models").then().statusCode(409).body("detail",
                containsString("twice"));
    }

    @Test
    void entityDefaultsToTheCallersOwn() {
        Map<String, Object> body = model(null, "mine");
        body.remove("entity");
        as(outsider).body(body).post("/v1/preview/models").then().statusCode(201).body("entity",
                equalTo(outsider.name()));
    }

    @Test
    void invalidRegistrationsAre422() {
        Map<String, Object> unknown = model(team.name, "x");
        unknown.put("base_model", "no-such-model");
        as(member).body(unknown).post("/v1/preview/models").then().statusCode(422)
                .body("detail[0].loc", contains("body", "base_model"))
                .body("detail[0].msg", containsString("no-such-model"));
        Map<String, Object> uncatalogued = model(team.name, "x");
        uncatalogued.put("base_model", "example/uncatalogued-base"); // trainable by workers, but not served
        as(member).body(uncatalogued).post("/v1/preview/models").then().statusCode(422)
                .body("detail[0].loc", contains("body", "base_model"))
                .body("detail[0].msg", containsString("not in the inference catalog"));
        as(member).body(model(team.name, "bad name")).post("/v1/preview/models").then().statusCode(422)
                .body("detail[0].loc", contains("body", "name"));
        Map<String, Object> noProject = model(team.name, "x");
        noProject.remove("project");
        as(member).body(noProject).post("/v1/preview/models").then().statusCode(422).body("detail[0].loc",
                contains("body", "project"));
    }

    @Test
    void permissions() {
        as(viewer).body(model(team.name, "v")).post("/v1/preview/models").then().statusCode(403);
        as(outsider).body(model(team.name, "o")).post("/v1/preview/models").then().statusCode(403);
        String id = as(member).body(model(team.name, "shared")).post("/v1/preview/models").then().statusCode(201)
                .extract().path("id");
        as(viewer).get("/v1/preview/models/" + id).then().statusCode(200);
        as(viewer).get("/v1/preview/models/" + id + "/checkpoints").then().statusCode(200);
        as(outsider).get("/v1/preview/models/" + id).then().statusCode(403);
        as(outsider).get("/v1/preview/models/" + id + "/checkpoints").then().statusCode(403);
        as(viewer).delete("/v1/preview/models/" + id).then().statusCode(403);
        as(viewer).body(Map.of("steps", List.of(0))).delete("/v1/preview/models/" + id + "/checkpoints").then()
                .statusCode(403);
        as(outsider).get("/v1/preview/models").then().statusCode(200).body("data.id",
                org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasItem(id)));
        given().filter(Contract.TRAINING).get("/v1/preview/models/" + id).then().statusCode(401);
        as(member).get("/v1/preview/models/model_nothing").then().statusCode(404).body("detail",
                containsString("not found"));
    }

    @Test
    void listIsACursorPage() {
        for (int i = 0; i < 3; i++) {
            as(member).body(model(team.name, "m" + i)).post("/v1/preview/models").then().statusCode(201);
        }
        var first = as(viewer).queryParam("entity", team.name).queryParam("limit", 2).get("/v1/preview/models").then()
                .statusCode(200).body("data", hasSize(2)).body("has_more", equalTo(true))
                .body("data.name", contains("m2", "m1")).extract();
        as(viewer).queryParam("entity", team.name).queryParam("limit", 2)
                .queryParam("after", (String) first.path("last_id")).get("/v1/preview/models").then().statusCode(200)
                .body("data.name", contains("m0")).body("has_more", equalTo(false));
        as(viewer).queryParam("limit", 101).get("/v1/preview/models").then().statusCode(422);
    }

    @Test
    void logRecordsRunMetricsUnderTheSplit() {
        String id = as(member).body(model(team.name, "logged")).post("/v1/preview/models").then().statusCode(201)
                .extract().path("id");
        String run = as(member).get("/v1/preview/models/" + id).then().extract().path("run_id");
        Map<String, Object> group = Map.of("trajectories",
                List.of(trajectory(1.0, Map.of("correct", 1)), trajectory(0.0, Map.of("correct", 0))));
        as(member).body(Map.of("model_id", id, "trajectory_groups", List.of(group), "split", "val"))
                .post("/v1/preview/models/" + id + "/log").then().statusCode(204);
        given().filter(Contract.RUNS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + team.name + "/projects/agents/runs/" + run + "/summary").then()
                .statusCode(200).body("'val/reward'", equalTo(0.5f)).body("'val/num_trajectories'", equalTo(2))
                .body("'val/correct'", equalTo(0.5f)).body("'val/reward_std_dev'", equalTo(0.5f));
        as(member)
                .body(Map.of("trajectory_groups", List.of(Map.of("trajectories", List.of(Map.of("reward", 1)))),
                        "split", "val"))
                .post("/v1/preview/models/" + id + "/log").then().statusCode(422).body("detail[0].loc",
                        contains("body", "trajectory_groups", 0, "trajectories", 0, "messages_and_choices"));
        as(viewer).body(Map.of("trajectory_groups", List.of(group), "split", "val"))
                .post("/v1/preview/models/" + id + "/log").then().statusCode(403);
    }

    static Map<String, Object> trajectory(double reward, Map<String, Object> metrics) {
        return Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "hi"),
                        Map.of("finish_reason", "stop", "index", 0, "message",
                                Map.of("role", "assistant", "content", "hello"))),
                "reward", reward, "metrics", metrics, "metadata", Map.of(), "logs", List.of());
    }

    @Test
    void deletingCheckpointsAndTheModel() {
        String id = as(member).body(model(team.name, "doomed")).post("/v1/preview/models").then().statusCode(201)
                .extract().path("id");
        as(member).body(Map.of("steps", List.of(5, 7))).delete("/v1/preview/models/" + id + "/checkpoints").then()
                .statusCode(200).body("deleted_count", equalTo(0)).body("not_found_steps", contains(5, 7));
        as(member).delete("/v1/preview/models/" + id).then().statusCode(200).body("model_id", equalTo(id))
                .body("deleted_checkpoints", equalTo(1)).body("deleted_run", equalTo(true));
        as(member).get("/v1/preview/models/" + id).then().statusCode(404);
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + team.name + "/projects/agents/artifacts/collections/doomed").then()
                .statusCode(404);
        as(member).body(model(team.name, "doomed")).post("/v1/preview/models").then().statusCode(201);
    }
}

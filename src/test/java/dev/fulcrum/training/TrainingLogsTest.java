package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingModelsTest.as;
import static dev.fulcrum.training.TrainingModelsTest.model;
import static dev.fulcrum.training.TrainingModelsTest.trajectory;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.LabTest;

/**
 * Reading back the trajectory groups logged through {@code /log}: in logged order, paged, for readers of the project.
 */
@QuarkusTest
class TrainingLogsTest extends LabTest {

    String model;

    @BeforeEach
    void registerModel() {
        model = as(member).body(model(team.name, "logged")).post("/v1/preview/models").then().statusCode(201).extract()
                .path("id");
    }

    static Map<String, Object> group(double reward) {
        return Map.of("trajectories", List.of(trajectory(reward, Map.of("correct", 1)), trajectory(0.0, Map.of())));
    }

    void log(String split, double reward) {
        as(member).body(Map.of("trajectory_groups", List.of(group(reward)), "split", split))
                .post("/v1/preview/models/" + model + "/log").then().statusCode(204);
    }

    @Test
    void loggedGroupsComeBackInTheOrderTheyWereLogged() {
        as(viewer).get("/v1/preview/models/" + model + "/log").then().statusCode(200).body("object", equalTo("list"))
                .body("data", hasSize(0)).body("first_id", nullValue()).body("last_id", nullValue())
                .body("has_more", equalTo(false));
        log("train", 1.0);
        log("val", 0.5);

        as(viewer).get("/v1/preview/models/" + model + "/log").then().statusCode(200).body("data", hasSize(2))
                .body("data.split", contains("train", "val")).body("data.model_id", contains(model, model))
                .body("data.step", contains(0, 0)).body("data[0].created_at", notNullValue())
                .body("data[0].trajectory_groups", hasSize(1))
                .body("data[0].trajectory_groups[0].trajectories.reward", contains(1.0f, 0.0f))
                .body("data[1].trajectory_groups[0].trajectories[0].reward", equalTo(0.5f))
                .body("data[0].trajectory_groups[0].trajectories[0].metrics.correct", equalTo(1))
                .body("data[0].trajectory_groups[0].trajectories[0].messages_and_choices[1].message.content",
                        equalTo("hello"))
                .body("has_more", equalTo(false));
    }

    @Test
    void pagesFollowTheCursor() {
        log("a", 1.0);
        log("b", 1.0);
        log("c", 1.0);
        var first = as(viewer).queryParam("limit", 2).get("/v1/preview/models/" + model + "/log").then().statusCode(200)
                .body("data.split", contains("a", "b")).body("has_more", equalTo(true)).extract();
        String last = first.path("last_id");
        String next = as(viewer).queryParam("limit", 2).queryParam("after", last)
                .get("/v1/preview/models/" + model + "/log").then().statusCode(200).body("data.split", contains("c"))
                .body("has_more", equalTo(false)).extract().path("first_id");
        assertTrue(Long.parseLong(next) > Long.parseLong(last), next + " after " + last);
        as(viewer).queryParam("after", next).get("/v1/preview/models/" + model + "/log").then().statusCode(200)
                .body("data", hasSize(0)).body("has_more", equalTo(false));
    }

    @Test
    void badPagingIsRefused() {
        as(viewer).queryParam("limit", 0).get("/v1/preview/models/" + model + "/log").then().statusCode(422)
                .body("detail[0].loc", contains("query", "limit"));
        as(viewer).queryParam("limit", 101).get("/v1/preview/models/" + model + "/log").then().statusCode(422);
        as(viewer).queryParam("after", "log_1").get("/v1/preview/models/" + model + "/log").then().statusCode(422)
                .body("detail[0].loc", contains("query", "after"));
    }

    @Test
    void unknownModelsAnswer404AndOutsiders403() {
        as(viewer).get("/v1/preview/models/model_unknown/log").then().statusCode(404).body("detail",
                containsString("model_unknown"));
        as(outsider).get("/v1/preview/models/" + model + "/log").then().statusCode(403);
    }
}

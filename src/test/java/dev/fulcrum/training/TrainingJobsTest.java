package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static dev.fulcrum.training.TrainingClient.trajectory;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/** RL and SFT jobs through the API: validation, the built-in executor, events, checkpoints, cancel. */
@QuarkusTest
class TrainingJobsTest {

    @Inject
    Fixtures fixtures;

    private Account member;
    private Account viewer;
    private Account outsider;
    private String team;

    @BeforeEach
    void team() {
        Catalog.openAiCompatible("example/gpu-base", "http://127.0.0.1:9/v1");
        Account admin = fixtures.user("admin");
        member = fixtures.user("member");
        viewer = fixtures.user("viewer");
        outsider = fixtures.user("outsider");
        PlatformEntity entity = fixtures.team("lab", admin);
        fixtures.member(entity, member, Role.MEMBER);
        fixtures.member(entity, viewer, Role.VIEWER);
        team = entity.name;
    }

    static Map<String, Object> group(double first, double second) {
        return Map.of("trajectories", List.of(trajectory("say hi", "hi", first), trajectory("say hi", "ho", second)),
                "exceptions", List.of());
    }

    @Test
    void anRlJobRunsOnTheBuiltinExecutorAndMakesStep1() {
        String model = TrainingClient.register(member, team, "agents", "rl-agent", "fulcrum-tiny");
        String job = as(member)
                .body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0), group(0, 1)),
                        "experimental_config", Map.of("learning_rate", 0.01)))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        List<Map<String, Object>> events = TrainingClient.events(member, job, Duration.ofSeconds(60));
        assertEquals("training_started", events.get(0).get("type"));
        int steps = ((Number) ((Map<?, ?>) events.get(0).get("data")).get("num_sequences")).intValue();
        assertTrue(steps >= 1);
        List<Map<String, Object>> gradientSteps = events.stream().filter(e -> e.get("type").equals("gradient_step"))
                .toList();
        assertEquals(steps, gradientSteps.size());
        assertTrue(((Map<?, ?>) gradientSteps.get(0).get("data")).containsKey("loss"), events.toString());
        Map<String, Object> ended = events.get(events.size() - 1);
        assertEquals("training_ended", ended.get("type"), events.toString());

        as(viewer).get("/v1/preview/training-jobs/" + job).then().statusCode(200).body("status", equalTo("succeeded"))
                .body("kind", equalTo("rl")).body("checkpoint_step", equalTo(1)).body("model_id", equalTo(model))
                .body("started_at", notNullValue()).body("finished_at", notNullValue());
        as(member).queryParam("limit", 1).queryParam("order", "desc")
                .get("/v1/preview/models/" + model + "/checkpoints").then().statusCode(200)
                .body("data[0].step", equalTo(1)).body("data[0].metrics", hasKey("loss"))
                .body("has_more", equalTo(true));
        given().filter(Contract.ARTIFACTS).auth().oauth2(viewer.key())
                .get("/api/v1/entities/" + team + "/projects/agents/artifacts/collections/rl-agent/versions/latest")
                .then().statusCode(200).body("aliases", hasItems("latest", "step1")).body("metadata.step", equalTo(1));
        // this replica's built-in executor is alive (the GPU queue's state is other tests' workers': not asserted)
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v1/system-check")
                .then().body("cpu_queue.success", equalTo(true));
        // the latest checkpoint may go when nothing waits on it; the previous one becomes the latest
        as(member).body(Map.of("steps", List.of(1, 9))).delete("/v1/preview/models/" + model + "/checkpoints").then()
                .statusCode(200).body("deleted_count", equalTo(1)).body("not_found_steps", contains(9));
        given().filter(Contract.ARTIFACTS).auth().oauth2(viewer.key())
                .get("/api/v1/entities/" + team + "/projects/agents/artifacts/collections/rl-agent/versions/latest")
                .then().statusCode(200).body("aliases", hasItems("latest", "step0"));
    }

    @Test
    void aModelsJobsAreListedNewestFirstForReadersOfItsProject() {
        String model = TrainingClient.register(member, team, "agents", "listed", "fulcrum-tiny");
        String first = as(member).body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        String second = as(member).body(Map.of("model_id", model, "trajectory_groups", List.of(group(0, 1))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        as(viewer).get("/v1/preview/models/" + model + "/training-jobs").then().statusCode(200)
                .body("data.id", contains(second, first)).body("data[0].kind", equalTo("rl"))
                .body("data[0].model_id", equalTo(model)).body("data[0].created_at", notNullValue())
                .body("has_more", equalTo(false));
        as(viewer).queryParam("limit", 1).get("/v1/preview/models/" + model + "/training-jobs").then().statusCode(200)
                .body("data.id", contains(second)).body("last_id", equalTo(second)).body("has_more", equalTo(true));
        as(viewer).queryParam("after", second).get("/v1/preview/models/" + model + "/training-jobs").then()
                .statusCode(200).body("data.id", contains(first)).body("has_more", equalTo(false));
        as(viewer).queryParam("after", "job_none").get("/v1/preview/models/" + model + "/training-jobs").then()
                .statusCode(422).body("detail[0].loc", contains("query", "after"));
        as(outsider).get("/v1/preview/models/" + model + "/training-jobs").then().statusCode(403);
        as(member).get("/v1/preview/models/model_none/training-jobs").then().statusCode(404);
        TrainingClient.events(member, first, Duration.ofSeconds(60));
        TrainingClient.events(member, second, Duration.ofSeconds(60));
    }

    @Test
    void badTrajectoriesAre422NamingTheTrajectory() {
        String model = TrainingClient.register(member, team, "agents", "strict", "fulcrum-tiny");
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(group(1, 0), Map.of("trajectories", List.of(trajectory("a", "b", 1))))))
                .post("/v1/preview/training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("body", "trajectory_groups", 1, "trajectories"))
                .body("detail[0].msg", containsString("at least 2"));
        Map<String, Object> noReward = Map.of("messages_and_choices",
                List.of(Map.of("role", "user", "content", "q"), TrainingClient.choice("a")));
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory("a", "b", 1), noReward)))))
                .post("/v1/preview/training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("body", "trajectory_groups", 0, "trajectories", 1, "reward"));
        Map<String, Object> noChoice = Map.of("reward", 1, "messages_and_choices", List
                .of(Map.of("role", "user", "content", "q"), Map.of("role", "assistant", "content", "plain message")));
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(noChoice, trajectory("a", "b", 1))))))
                .post("/v1/preview/training-jobs").then().statusCode(422)
                .body("detail[0].loc",
                        contains("body", "trajectory_groups", 0, "trajectories", 0, "messages_and_choices"))
                .body("detail[0].msg", containsString("trainable"));
        Map<String, Object> badRole = Map.of("reward", 1, "messages_and_choices",
                List.of(Map.of("role", "wizard", "content", "q"), TrainingClient.choice("a")));
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups",
                        List.of(Map.of("trajectories", List.of(trajectory("a", "b", 1), badRole)))))
                .post("/v1/preview/training-jobs").then().statusCode(422).body("detail[0].loc",
                        contains("body", "trajectory_groups", 0, "trajectories", 1, "messages_and_choices", 0, "role"));
        as(member).body(Map.of("model_id", model, "trajectory_groups", List.of())).post("/v1/preview/training-jobs")
                .then().statusCode(422).body("detail[0].loc", contains("body", "trajectory_groups"));
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0)), "experimental_config",
                        Map.of("learning_rate", -1)))
                .post("/v1/preview/training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("body", "experimental_config", "learning_rate"));
        // a schedule of zeros trains nothing: refused (one ending at 0, as ART's decaying schedules do, is accepted)
        as(member)
                .body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0)), "experimental_config",
                        Map.of("learning_rate", List.of(0, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("body", "experimental_config", "learning_rate"));
        as(member).body(Map.of("model_id", "model_none", "trajectory_groups", List.of(group(1, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(404);
        as(viewer).body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(403);
        as(outsider).body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(403);
    }

    @Test
    void sftFromAnArtifactAndFromADataset() {
        String model = TrainingClient.register(member, team, "agents", "sft-agent", "fulcrum-tiny");
        String lines = """
                {"messages": [{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "4"}]}
                {"messages": [{"role": "user", "content": "3+3"}, {"role": "assistant", "content": "6"}], "tools": []}
                """;
        upload("sft-data", lines);
        String job = as(member)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + team + "/agents/sft-data:v0", "config",
                        Map.of("batch_size", 1, "learning_rate", List.of(0.01, 0.0))))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
        List<Map<String, Object>> events = TrainingClient.events(member, job, Duration.ofSeconds(60));
        assertEquals("training_ended", events.get(events.size() - 1).get("type"), events.toString());
        assertEquals(2, ((Number) ((Map<?, ?>) events.get(0).get("data")).get("num_sequences")).intValue());
        // the built-in trainer takes each step's rate from the schedule (ART's decaying schedules end at 0)
        assertEquals(List.of(0.01f, 0.0f),
                events.stream().filter(e -> e.get("type").equals("gradient_step"))
                        .map(e -> ((Number) ((Map<?, ?>) e.get("data")).get("learning_rate")).floatValue()).toList(),
                events.toString());
        as(member).get("/v1/preview/training-jobs/" + job).then().body("kind", equalTo("sft")).body("checkpoint_step",
                equalTo(1));

        String digest = given().filter(Contract.DATASETS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "chats", "rows",
                        List.of(Map.of("messages",
                                List.of(Map.of("role", "user", "content", "hi"),
                                        Map.of("role", "assistant", "content", "hello"))))))
                .post("/v2/" + team + "/agents/datasets").then().statusCode(200).extract().path("digest");
        String second = as(member)
                .body(Map.of("model_id", model, "training_data_url",
                        "weave:///" + team + "/agents/object/chats:" + digest))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
        events = TrainingClient.events(member, second, Duration.ofSeconds(60));
        assertEquals("training_ended", events.get(events.size() - 1).get("type"), events.toString());
        as(member).get("/v1/preview/training-jobs/" + second).then().body("checkpoint_step", equalTo(2));
    }

    @Test
    void badSftDataIs422NamingTheLine() {
        String model = TrainingClient.register(member, team, "agents", "sft-strict", "fulcrum-tiny");
        upload("bad-data", """
                {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
                not json
                {"messages": [{"role": "user", "content": "only a question"}]}
                {"prompt": "no messages"}
                """);
        as(member)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + team + "/agents/bad-data:latest"))
                .post("/v1/preview/sft-training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("training_data", "train.jsonl", "line", 2))
                .body("detail[1].loc", contains("training_data", "train.jsonl", "line", 3))
                .body("detail[1].msg", containsString("assistant"))
                .body("detail[2].loc", contains("training_data", "train.jsonl", "line", 4));
        as(member).body(Map.of("model_id", model, "training_data_url", "https://example.com/train.jsonl"))
                .post("/v1/preview/sft-training-jobs").then().statusCode(422)
                .body("detail[0].loc", contains("body", "training_data_url"));
        as(member)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + team + "/agents/missing:v0"))
                .post("/v1/preview/sft-training-jobs").then().statusCode(404);
    }

    @Test
    void aQueuedJobIsCancelledAndItsCheckpointIsKeptWhileItWaits() {
        // no GPU worker runs in this test: the job of a worker model stays queued
        String model = TrainingClient.register(member, team, "agents", "gpu-agent", "example/gpu-base");
        String job = as(member).body(Map.of("model_id", model, "trajectory_groups", List.of(group(1, 0))))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        as(member).body(Map.of("steps", List.of(0))).delete("/v1/preview/models/" + model + "/checkpoints").then()
                .statusCode(409).body("detail", containsString("latest"));
        as(viewer).post("/v1/preview/training-jobs/" + job + "/cancel").then().statusCode(403);
        as(member).post("/v1/preview/training-jobs/" + job + "/cancel").then().statusCode(200).body("status",
                equalTo("cancelled"));
        as(member).post("/v1/preview/training-jobs/" + job + "/cancel").then().statusCode(409);
        List<Map<String, Object>> events = TrainingClient.events(member, job, Duration.ofSeconds(5));
        assertEquals("training_failed", events.get(0).get("type"));
        as(outsider).get("/v1/preview/training-jobs/" + job + "/events").then().statusCode(403);
        as(member).get("/v1/preview/training-jobs/job_none").then().statusCode(404);
    }

    private void upload(String collection, String trainJsonl) {
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", trainJsonl.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "application/jsonl")
                .multiPart("type", "dataset")
                .post("/api/v1/entities/" + team + "/projects/agents/artifacts/collections/" + collection + "/versions")
                .then().statusCode(201);
    }
}

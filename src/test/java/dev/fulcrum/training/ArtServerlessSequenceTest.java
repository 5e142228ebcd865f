package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The calls of OpenPipe ART's serverless backend, in its order: register with return_existing, rollouts through chat
 * completions on the checkpoint id, a training job of trajectory groups (the Choices as chat completions returned
 * them), events polled with {@code after} until training_ended, the newest checkpoint, then chat on {@code :step1}.
 */
@QuarkusTest
class ArtServerlessSequenceTest {

    @Inject
    Fixtures fixtures;

    static RequestSpecification chat(Account account) {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(account.key());
    }

    @Test
    void theArtSequence() {
        Account admin = fixtures.user("owner");
        Account member = fixtures.user("member");
        Account outsider = fixtures.user("outsider");
        PlatformEntity team = fixtures.team("art", admin);
        fixtures.member(team, member, Role.MEMBER);
        Map<String, Object> create = new HashMap<>(Map.of("entity", team.name, "project", "tic-tac-toe", "name",
                "agent-001", "base_model", "fulcrum-tiny", "return_existing", true));
        String id = as(member).body(create).post("/v1/preview/models").then().statusCode(201).extract().path("id");
        as(member).body(create).post("/v1/preview/models").then().statusCode(200).body("id", equalTo(id));

        String checkpoint = "wandb-artifact:///" + team.name + "/tic-tac-toe/agent-001";
        List<Map<String, Object>> groups = new ArrayList<>();
        for (String prompt : List.of("Play a move.", "Name a square.")) {
            List<Map<String, Object>> trajectories = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Map<String, Object> choice = chat(member)
                        .body(Map.of("model", checkpoint, "messages",
                                List.of(Map.of("role", "user", "content", prompt)), "max_tokens", 8, "temperature", 1.0,
                                "seed", i))
                        .post("/v1/chat/completions").then().statusCode(200).body("model", equalTo(checkpoint))
                        .extract().path("choices[0]");
                trajectories.add(Map.of("messages_and_choices",
                        List.of(Map.of("role", "user", "content", prompt), choice), "reward", (double) i, "metrics",
                        Map.of("moves", i), "metadata", Map.of(), "logs", List.of()));
            }
            groups.add(Map.of("trajectories", trajectories, "exceptions", List.of()));
        }
        chat(outsider).body(Map.of("model", checkpoint, "messages", List.of(Map.of("role", "user", "content", "hi"))))
                .post("/v1/chat/completions").then().statusCode(403);

        String job = as(member).body(Map.of("model_id", id, "trajectory_groups", groups))
                .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
        List<Map<String, Object>> events = TrainingClient.events(member, job, Duration.ofSeconds(60));
        assertEquals("training_ended", events.get(events.size() - 1).get("type"), events.toString());

        as(member).queryParam("limit", 1).queryParam("order", "desc").get("/v1/preview/models/" + id + "/checkpoints")
                .then().statusCode(200).body("data", hasSize(1)).body("data[0].step", equalTo(1));
        chat(member)
                .body(Map.of("model", checkpoint + ":step1", "messages",
                        List.of(Map.of("role", "user", "content", "Play a move.")), "max_tokens", 8))
                .post("/v1/chat/completions").then().statusCode(200).body("model", equalTo(checkpoint + ":step1"))
                .body("choices[0].message.role", equalTo("assistant"));
        chat(member)
                .body(Map.of("model", checkpoint + ":step7", "messages",
                        List.of(Map.of("role", "user", "content", "hi"))))
                .post("/v1/chat/completions").then().statusCode(404);
    }
}

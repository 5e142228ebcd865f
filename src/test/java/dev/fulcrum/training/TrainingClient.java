package dev.fulcrum.training;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;

/** Calls of the training API as ART's serverless client makes them (also for other packages' tests). */
public final class TrainingClient {

    private TrainingClient() {
    }

    /** Adds an openai-compatible model to the inference catalog; a model already there is left as it is. */
    /** A worker's request (its bearer token) to the worker protocol. */
    static RequestSpecification worker(String token) {
        return given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(token);
    }

    public static RequestSpecification as(Account account) {
        return given().filter(Contract.TRAINING).contentType(ContentType.JSON).auth().oauth2(account.key());
    }

    public static String register(Account account, String entity, String project, String name, String baseModel) {
        Map<String, Object> body = new HashMap<>();
        body.put("entity", entity);
        body.put("project", project);
        body.put("name", name);
        body.put("base_model", baseModel);
        body.put("return_existing", true);
        return as(account).body(body).post("/v1/preview/models").then()
                .statusCode(org.hamcrest.Matchers.oneOf(200, 201)).extract().path("id");
    }

    static Map<String, Object> choice(String content) {
        return Map.of("finish_reason", "stop", "index", 0, "logprobs", Map.of("content", List.of()), "message",
                Map.of("role", "assistant", "content", content));
    }

    static Map<String, Object> trajectory(String prompt, String answer, double reward) {
        return Map.of("messages_and_choices", List.of(Map.of("role", "user", "content", prompt), choice(answer)),
                "tools", List.of(), "reward", reward, "metrics", Map.of(), "metadata", Map.of(), "logs", List.of());
    }

    /** Polls the events with {@code after}, as ART does, until the job ended or failed; all events in order. */
    public static List<Map<String, Object>> events(Account account, String jobId, Duration timeout) {
        List<Map<String, Object>> all = new ArrayList<>();
        String[] after = { null };
        return await("job " + jobId + " ended").atMost(timeout).until(() -> {
            RequestSpecification request = as(account).queryParam("limit", 100);
            if (after[0] != null) {
                request.queryParam("after", after[0]);
            }
            JsonPath page = request.get("/v1/preview/training-jobs/" + jobId + "/events").then().statusCode(200)
                    .extract().jsonPath();
            List<Map<String, Object>> data = page.getList("data");
            all.addAll(data);
            if (!data.isEmpty()) {
                after[0] = page.getString("last_id");
            }
            return List.copyOf(all);
        }, events -> events.stream()
                .anyMatch(e -> e.get("type").equals("training_ended") || e.get("type").equals("training_failed")));
    }
}

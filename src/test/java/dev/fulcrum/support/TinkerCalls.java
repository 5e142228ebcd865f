package dev.fulcrum.support;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Fixtures.Account;

/** The Tinker API as the SDK calls it, each answer checked against {@code openapi/tinker.yaml}. */
public final class TinkerCalls {

    public static final OpenApiValidationFilter TINKER = Contract.of("tinker");

    private TinkerCalls() {
    }

    /** A request of the user's, with the SDK's key header ({@code X-API-Key: tml-...}). */
    public static RequestSpecification as(Account user) {
        return given().filter(TINKER).contentType(ContentType.JSON).header("X-API-Key", "tml-" + user.key());
    }

    /** A worker's request (its bearer token) to the Tinker worker protocol. */
    public static RequestSpecification worker(String token) {
        return given().filter(TINKER).contentType(ContentType.JSON).auth().oauth2(token);
    }

    /** The adapter config a worker of these tests saves beside its weights. */
    public static final byte[] ADAPTER_CONFIG = "{\"r\": 4, \"lora_alpha\": 32}".getBytes(StandardCharsets.UTF_8);

    /** The model's next operation, of that kind, as its worker (its token) takes it: the URL of its result. */
    public static String next(String token, String model, String kind) {
        JsonPath next = worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5").then()
                .statusCode(200).extract().jsonPath();
        assertEquals(kind, next.getString("operation.kind"), next.prettify());
        return "/api/v1/workers/tinker-models/" + model + "/results/" + next.getString("operation.request_id");
    }

    /**
     * A save ({@code kind}: {@code save_weights} or {@code save_weights_for_sampler}, its body besides the model id)
     * that the model's worker answers with an adapter ({@link #ADAPTER_CONFIG} and {@code weights}); the saved path.
     */
    public static String save(Account user, String token, String model, String kind, Map<String, Object> save,
            byte[] weights) {
        Map<String, Object> body = new HashMap<>(save);
        body.put("model_id", model);
        String request = as(user).body(body).post("/tinker/api/v1/" + kind).then().statusCode(200).extract()
                .path("request_id");
        String op = next(token, model, kind);
        Map.of("adapter_config.json", ADAPTER_CONFIG, "adapter_model.safetensors", weights)
                .forEach((path, content) -> given().filter(TINKER).auth().oauth2(token)
                        .contentType("application/octet-stream").queryParam("path", path).body(content)
                        .put(op + "/files").then().statusCode(200));
        worker(token).body(Map.of("result", Map.of())).post(op).then().statusCode(200);
        return future(user, request).then().statusCode(200).extract().path("path");
    }

    /**
     * The future's answer once it is no longer pending: {@code retrieve_future} is asked again while it answers 408,
     * for at most a minute (the last answer then).
     */
    public static Response future(Account user, String requestId) {
        Response answer;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        do {
            answer = as(user).body(Map.of("request_id", requestId)).post("/tinker/api/v1/retrieve_future");
        } while (answer.statusCode() == 408 && System.nanoTime() < deadline);
        return answer;
    }
}

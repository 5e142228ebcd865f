package dev.fulcrum.inference;

import static io.restassured.RestAssured.given;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;

/** Requests to the inference API, checked against {@code openapi/inference.yaml}. */
public final class Inference {

    private Inference() {
    }

    public static RequestSpecification as(String key) {
        RequestSpecification spec = given().filter(Contract.INFERENCE).contentType(ContentType.JSON);
        return key == null ? spec : spec.auth().oauth2(key);
    }

    public static RequestSpecification asAdmin() {
        return as(EmbeddedPostgresResource.ADMIN_KEY);
    }

    public static Map<String, Object> chat(String model, String content) {
        return Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", content)));
    }

    /** Adds an upstream model through the admin API. */
    public static void upstreamModel(String id, OpenAiStub stub, String upstreamModel, Map<String, Object> extra) {
        JsonObject body = new JsonObject().put("id", id).put("backend", "openai-compatible")
                .put("base_url", stub == null ? "http://127.0.0.1:9/v1" : stub.baseUrl())
                .put("upstream_model", upstreamModel).put("api_key", "upstream-secret");
        extra.forEach(body::put);
        asAdmin().body(body.encode()).post("/api/v1/admin/models").then().statusCode(201);
    }

    /** The {@code data:} payloads of a Server-Sent Events body, in order. */
    public static List<String> events(String body) {
        List<String> events = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            if (event.startsWith("data: ")) {
                events.add(event.substring(6));
            }
        }
        return events;
    }
}

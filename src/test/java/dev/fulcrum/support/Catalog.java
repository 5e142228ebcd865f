package dev.fulcrum.support;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;

import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

/** The inference catalog as the admin sets it up for a test, each answer checked against the inference contract. */
public final class Catalog {

    private Catalog() {
    }

    /**
     * The model {@code id} served at {@code baseUrl} by an OpenAI-compatible server (vLLM, or a stub of one): added,
     * or, when the catalog has it already (another class put it there), pointed at {@code baseUrl} again.
     */
    public static void openAiCompatible(String id, String baseUrl) {
        Map<String, Object> model = Map.of("id", id, "backend", "openai-compatible", "base_url", baseUrl,
                "upstream_model", "base-model", "api_key", "vllm-secret", "connect_timeout_ms", 2000);
        if (admin().body(model).post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)))
                .extract().statusCode() == 409) {
            admin().body(model).put("/api/v1/admin/models/{id}", id).then().statusCode(200);
        }
    }

    /** {@code model} added, unless the catalog has a model of its id already. */
    public static void add(Map<String, Object> model) {
        admin().body(model).post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)));
    }

    private static RequestSpecification admin() {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY);
    }
}

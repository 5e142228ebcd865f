package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.asAdmin;
import static dev.fulcrum.inference.Inference.chat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.agroal.api.AgroalDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/** The model catalog managed by server administrators under /api/v1/admin/models. */
@QuarkusTest
class CatalogAdminTest {

    @Inject
    Fixtures fixtures;

    @Inject
    AgroalDataSource dataSource;

    private static String path(String id) {
        return "/api/v1/admin/models/" + id.replace("/", "%2F");
    }

    private static RequestSpecification admin() {
        return asAdmin().urlEncodingEnabled(false);
    }

    @Test
    void adminsManageModelsAndKeysAreSealedAndNeverReturned() throws Exception {
        String id = Fixtures.unique("meta-llama/Llama-3.1-8B-Instruct");
        admin().body(Map.of("id", id, "backend", "openai-compatible", "base_url", "http://vllm.internal:8000/v1",
                "api_key", "sk-upstream-very-secret", "max_concurrency", 4)).post("/api/v1/admin/models").then()
                .statusCode(201).body("id", equalTo(id)).body("has_api_key", equalTo(true))
                .body("$", not(hasKey("api_key"))).body("upstream_model", equalTo(id)).body("root", equalTo(id))
                .body("source", equalTo("admin")).body("max_concurrency", equalTo(4));
        try (Connection connection = dataSource.getConnection();
                PreparedStatement select = connection
                        .prepareStatement("select api_key_sealed from inference_models where id = ?")) {
            select.setString(1, id);
            try (ResultSet rs = select.executeQuery()) {
                assertTrue(rs.next());
                assertFalse(new String(rs.getBytes(1), StandardCharsets.ISO_8859_1).contains("very-secret"));
            }
        }
        admin().get("/api/v1/admin/models").then().statusCode(200).body("id", hasItem(id))
                .body("id", hasItem("fulcrum-tiny")).body("find { it.id == 'fulcrum-tiny' }.source", equalTo("config"));
        admin().get(path(id)).then().statusCode(200).body("base_url", equalTo("http://vllm.internal:8000/v1"));
        Account user = fixtures.user("lister");
        as(user.key()).get("/v1/models").then().statusCode(200).body("data.id", hasItem(id));

        admin().body(Map.of("backend", "openai-compatible", "base_url", "http://vllm.internal:8000/v1",
                "upstream_model", "llama", "root", "meta-llama/Llama-3.1-8B")).put(path(id)).then().statusCode(200)
                .body("upstream_model", equalTo("llama")).body("root", equalTo("meta-llama/Llama-3.1-8B"))
                .body("has_api_key", equalTo(true));
        admin().body(Map.of("backend", "openai-compatible", "base_url", "http://vllm.internal:8000/v1", "api_key", ""))
                .put(path(id)).then().statusCode(200).body("has_api_key", equalTo(false));
        admin().delete(path(id)).then().statusCode(204);
        admin().get(path(id)).then().statusCode(404);
        as(user.key()).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(404);
    }

    @Test
    void conflictsAndInvalidModels() {
        String id = Fixtures.unique("dup");
        admin().body(Map.of("id", id, "backend", "builtin")).post("/api/v1/admin/models").then().statusCode(201);
        admin().body(Map.of("id", id, "backend", "builtin")).post("/api/v1/admin/models").then().statusCode(409);
        admin().body(Map.of("id", "fulcrum-tiny", "backend", "builtin")).post("/api/v1/admin/models").then()
                .statusCode(409);
        admin().body(Map.of("backend", "builtin")).put(path("fulcrum-tiny")).then().statusCode(409);
        admin().delete(path("fulcrum-tiny")).then().statusCode(409);
        admin().delete(path("no-such-model")).then().statusCode(404);
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "openai-compatible")).post("/api/v1/admin/models")
                .then().statusCode(422).body("errors[0].field", equalTo("base_url"));
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "openai-compatible", "base_url", "ftp://x"))
                .post("/api/v1/admin/models").then().statusCode(422).body("errors[0].field", equalTo("base_url"));
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "gpu-magic")).post("/api/v1/admin/models").then()
                .statusCode(422);
        admin().body(Map.of("id", " " + Fixtures.unique("x"), "backend", "builtin")).post("/api/v1/admin/models").then()
                .statusCode(422).body("errors[0].field", equalTo("id"))
                .body("errors[0].message", equalTo("Must be 1 to 256 characters without leading or trailing spaces"));
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "gguf_path", " "))
                .post("/api/v1/admin/models").then().statusCode(422).body("errors[0].field", equalTo("gguf_path"));
        // a reasoning format is a gguf model's setting only, auto or none
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "builtin", "reasoning_format", "none"))
                .post("/api/v1/admin/models").then().statusCode(422);
        admin().body(Map.of("id", Fixtures.unique("x"), "backend", "gguf", "gguf_path", "/x.gguf", "reasoning_format",
                "sometimes")).post("/api/v1/admin/models").then().statusCode(422);
        String gguf = Fixtures.unique("x");
        admin().body(Map.of("id", gguf, "backend", "gguf", "gguf_path", "/x.gguf")).post("/api/v1/admin/models").then()
                .statusCode(201).body("reasoning_format", equalTo("auto"));
        admin().body(Map.of("backend", "gguf", "gguf_path", "/x.gguf", "reasoning_format", "none")).put(path(gguf))
                .then().statusCode(200).body("reasoning_format", equalTo("none"));
        admin().get(path(gguf)).then().statusCode(200).body("reasoning_format", equalTo("none"));
        admin().delete(path(gguf)).then().statusCode(204);
        // a second builtin-backed model id answers like the built-in model
        Account user = fixtures.user("dup");
        as(user.key())
                .body(Map.of("model", id, "messages", java.util.List.of(Map.of("role", "user", "content", "Hi")),
                        "max_tokens", 2))
                .post("/v1/chat/completions").then().statusCode(200).body("model", equalTo(id));
    }

    @Test
    void onlyServerAdministrators() {
        Account user = fixtures.user("notadmin");
        as(user.key()).get("/api/v1/admin/models").then().statusCode(403);
        as(user.key()).body(Map.of("id", "x", "backend", "builtin")).post("/api/v1/admin/models").then()
                .statusCode(403);
        as(null).get("/api/v1/admin/models").then().statusCode(401);
    }
}

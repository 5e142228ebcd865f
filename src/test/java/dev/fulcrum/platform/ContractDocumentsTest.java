package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Every document of openapi/ is served as written, and /q/openapi merges them into one; a component name that two
 * documents define differently would silently lose one definition there.
 */
@QuarkusTest
class ContractDocumentsTest {

    @Test
    void theContractsAreServedAsWrittenAndMerged() {
        for (String document : List.of("datasets", "accounts", "training", "artifacts", "runs", "events", "wandb",
                "tinker")) {
            given().get("/openapi/" + document + ".yaml").then().statusCode(200).body(containsString("openapi: 3.0.3"));
        }
        given().get("/openapi/automations.yaml").then().statusCode(200).body(containsString("openapi: 3.1.0"))
                .body(containsString("\nwebhooks:\n  webhookDelivery:"));
        // the W&B protocol's GraphQL schema is published beside its OpenAPI document
        given().get("/openapi/wandb.graphql").then().statusCode(200).body(containsString("type Query {"));
        given().accept("application/json").get("/q/openapi").then().statusCode(200)
                .body("paths", hasKey("/v2/{entity}/{project}/datasets/{object_id}/versions/{digest}"))
                .body("paths", hasKey("/table/query")).body("paths", hasKey("/v1/system-check"))
                .body("paths", hasKey("/api/v1/users/me"))
                .body("paths", hasKey(
                        "/api/v1/entities/{entity}/projects/{project}/artifacts/collections/{collection}/versions"))
                .body("paths", hasKey("/api/v1/artifacts/resolve"))
                .body("paths", hasKey("/api/v1/entities/{entity}/projects/{project}/runs/{run}/history"))
                .body("paths", hasKey("/api/v1/registries/{registry}/events"))
                .body("paths", hasKey("/files/{entity}/{project}/{run}/file_stream"))
                .body("paths", hasKey("/api/v1/teams/{team}/secrets/{secret}"))
                .body("paths", hasKey("/api/v1/teams/{team}/webhooks/{webhookId}/test"))
                .body("paths", hasKey("/api/v1/teams/{team}/webhooks/{webhookId}/deliveries/redeliver-failed"));
    }

    @Test
    void componentsSharedBetweenDocumentsAreIdentical() throws IOException {
        YAMLMapper yaml = new YAMLMapper();
        Map<String, JsonNode> seen = new HashMap<>();
        Map<String, Path> where = new HashMap<>();
        List<String> clashes = new ArrayList<>();
        int documents = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of("openapi"), "*.yaml")) {
            for (Path file : files) {
                documents++;
                JsonNode components = yaml.readTree(file.toFile()).path("components");
                for (Iterator<Map.Entry<String, JsonNode>> kinds = components.fields(); kinds.hasNext();) {
                    Map.Entry<String, JsonNode> kind = kinds.next();
                    for (Iterator<Map.Entry<String, JsonNode>> it = kind.getValue().fields(); it.hasNext();) {
                        Map.Entry<String, JsonNode> component = it.next();
                        String key = kind.getKey() + "/" + component.getKey();
                        JsonNode earlier = seen.putIfAbsent(key, component.getValue());
                        if (earlier == null) {
                            where.put(key, file);
                        } else if (!earlier.equals(component.getValue())) {
                            clashes.add(key + " differs between " + where.get(key) + " and " + file);
                        }
                    }
                }
            }
        }
        assertTrue(documents >= 3, "the contract documents are read");
        assertEquals(List.of(), clashes);
    }
}

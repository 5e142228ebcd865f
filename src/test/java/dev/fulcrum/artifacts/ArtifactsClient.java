package dev.fulcrum.artifacts;

import static io.restassured.RestAssured.given;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;

/** Calls of the artifacts API for tests; every response is checked against openapi/artifacts.yaml. */
final class ArtifactsClient {

    private ArtifactsClient() {
    }

    static RequestSpecification as(Account account) {
        RequestSpecification spec = given().filter(Contract.ARTIFACTS);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    static String collections(String entity, String project) {
        return "/api/v1/entities/" + entity + "/projects/" + project + "/artifacts/collections";
    }

    /** Uploads text files (path to content) as a new version. */
    static Response upload(Account account, String collectionPath, Map<String, String> files, String metadata,
            String type) {
        RequestSpecification spec = as(account).contentType("multipart/form-data");
        files.forEach((path, content) -> spec.multiPart("file", path, content.getBytes(StandardCharsets.UTF_8),
                "text/plain"));
        if (metadata != null) {
            spec.multiPart("metadata", metadata);
        }
        if (type != null) {
            spec.multiPart("type", type);
        }
        return spec.post(collectionPath + "/versions");
    }
}

package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.artifacts.BlobCollector;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * The public API of artifacts of the official {@code wandb} SDK, unchanged
 * ({@code src/test/python/wandb_sdk/artifacts_api_e2e.py}): {@code Api().artifacts}, {@code artifact_types},
 * {@code artifact_collections}, {@code artifact.delete(delete_aliases=)} and {@code artifact.unlink()}; what they
 * changed is what the REST API then shows, and the blob of a deleted version is freed by the blob collector.
 */
@QuarkusTest
class WandbArtifactsApiSdkTest {

    static final String SCRIPT = "wandb_sdk/artifacts_api_e2e.py";

    @Inject
    Fixtures fixtures;

    @Inject
    BlobCollector collector;

    @Inject
    BlobStore blobs;

    @TestHTTPResource("/")
    URI base;

    @Test
    void thePublicApiListsDeletesAndUnlinksArtifacts() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        Registry registry = fixtures.registry("sdk-registry", admin);
        String project = "sdk-artifacts-api";
        Map<String, String> env = WandbSdkTest.sdkEnv(base, admin, team.name, project);
        env.put("REGISTRY", registry.name);

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5), env);
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        assertTrue(read.getString("refused").contains("has the aliases best"), output);
        assertTrue(read.getDouble("refused_seconds") < 10, "a refusal the SDK does not retry: " + output);
        assertTrue(read.getString("unlinked").contains("api-models"), output);

        // what the SDK deleted and unlinked is gone from the REST API too; the rest is as it was
        String collections = "/api/v1/entities/" + team.name + "/projects/" + project + "/artifacts/collections/";
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(collections + "api-data/versions").then().statusCode(200)
                .body("versions.version", contains("v2")).body("versions[0].aliases", hasItem("latest"));
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(collections + "api-data/versions/best").then().statusCode(404);
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(collections + "api-model/versions/v0").then().statusCode(200);
        WandbSdkTest.as(admin, Contract.ARTIFACTS)
                .get("/api/v1/registries/" + registry.name + "/collections/api-models/versions").then().statusCode(404);

        // the deleted version's file is used by nothing any more: the blob collector frees it
        String deleted = read.getString("deleted_blob");
        String kept = read.getString("kept_blob");
        assertTrue(blobs.size(deleted).isPresent());
        collector.sweep(Duration.ZERO);
        assertFalse(blobs.size(deleted).isPresent(), deleted);
        assertTrue(blobs.size(kept).isPresent(), kept);
    }
}

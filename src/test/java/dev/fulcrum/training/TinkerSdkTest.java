package dev.fulcrum.training;

import static dev.fulcrum.support.TinkerCalls.TINKER;
import static dev.fulcrum.support.TinkerCalls.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
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
import io.restassured.response.Response;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.RealModels;
import dev.fulcrum.support.TinkerCalls;
import dev.fulcrum.tinker.TinkerProto;

/**
 * The Tinker API ({@code /tinker}, docs/tinker.md): the real {@code tinker} SDK 0.18.2 from PyPI, unchanged
 * ({@code tinker_sdk/tinker_e2e.py}, in its own pinned environment), trains a LoRA of SmolLM2's GGUF held by one
 * {@code fulcrum-worker}: cross-entropy steps until the loss halves, a forward, an importance-sampling step, saved
 * sampler weights answering a taught fact (and top-k 1 sampling them greedily), a saved training state and the step
 * after it, two RL steps on samples of the current weights, the REST client's listings and deletes; then the worker
 * dies and the model's next operation fails, saying so, and a training client made from the saved state with its
 * optimizer, on a second worker, takes exactly the step the lost model took. With the protocol's refusals in the SDK's
 * error shape. In the application of {@link ExternalWorkers} (SmolLM2 is its trainable catalog model).
 */
@QuarkusTest
@TestProfile(ExternalWorkers.class)
class TinkerSdkTest {

    static final String REQUIREMENTS = "tinker_sdk/requirements.txt";
    static final String REQUIREMENTS_038 = "tinker_sdk_038/requirements.txt";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void worker() throws Exception {
        FulcrumWorkerProcess.prepare();
    }

    @Test
    void theSdkTrainsSmolLm2HeldByAWorkerAndALostWorkerFailsTheModel() throws Exception {
        Account user = fixtures.user("tinkersdk");
        Map<String, String> env = Map.of("FULCRUM_URL", base.toString(), "FULCRUM_KEY", user.key(), "TINKER_PROJECT",
                "facts", "BASE_MODEL", SmolLm2TrainingTest.BASE_MODEL, "GGUF", RealModels.smolLm2().toString());
        FulcrumWorkerProcess.Running worker = SmolLm2TrainingTest.worker(base.toString(), "tinker-worker");
        try {
            String output = PythonClients.run(REQUIREMENTS, "tinker_sdk/tinker_e2e.py", Duration.ofMinutes(5), env,
                    worker);
            Matcher found = Pattern.compile("RESULT (\\{.*})").matcher(output);
            assertTrue(found.find(), output + "\n" + worker.log());
            JsonPath result = JsonPath.from(found.group(1));
            System.out.println("Tinker SDK: " + found.group(1));
            assertTrue(result.getList("supported_models").contains(SmolLm2TrainingTest.BASE_MODEL), output);
            assertEquals(422, result.getInt("unknown_base"), output);
            assertEquals(4, result.getInt("lora_rank"));
            List<Float> losses = result.getList("losses", Float.class);
            assertTrue(losses.get(losses.size() - 1) <= losses.get(0) / 2, "the loss halves: " + losses);
            assertEquals(result.getList("datum_lengths"), result.getList("logprobs_lengths"));
            assertTrue(result.getFloat("forward_loss") < losses.get(0) / 2, output);
            // behaviour log-probabilities of the same weights: every ratio is 1
            assertEquals(1.0, result.getDouble("importance_sampling_ratio"), 1e-3, output);
            assertTrue(result.getDouble("optim_metrics.step") == losses.size() + 1, output);
            String model = result.getString("model_id");
            // the refused create_lora_training_client took model_seq_id 0 of the session
            assertTrue(model.matches("s[a-z0-9]{20}:train:1"), model);
            // the saved weights: checkpoint step 1 of a Fulcrum model of the session's project, which the sampling
            // client (llama.cpp with the adapter) and the inference API both answer the taught fact with
            String name = model.replace(':', '-');
            TrainingClient.as(user).get("/v1/preview/models?entity=" + user.name() + "&project=facts").then()
                    .statusCode(200).body("data.name", hasItem(name));
            assertEquals("tinker://" + model + "/sampler_weights/facts", result.getString("sampler_path"));
            assertTrue(result.getString("trained_answer").contains("Quillon"), output);
            assertFalse(result.getString("base_answer").contains("Quillon"), output);
            assertEquals("stop", result.getString("trained_stop_reason"), output);
            assertTrue(result.getBoolean("trained_logprobs"), output);
            assertTrue(result.getBoolean("top_k_1_is_greedy"), output);
            assertEquals(List.of(5, 5), result.getList("drawn.logprobs"), output);
            assertEquals(List.of("length", "length"), result.getList("drawn.stop_reason"), output);
            List<Object> promptLogprobs = result.getList("prompt_logprobs");
            assertTrue(promptLogprobs.get(0) == null && promptLogprobs.size() > 3, output);
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                    .body(Map.of("model", "wandb-artifact:///" + user.name() + "/facts/" + name + ":step1", "prompt",
                            "The capital of Zorbia is", "temperature", 0, "max_tokens", 8))
                    .post("/v1/completions").then().statusCode(200).body("choices[0].text", containsString("Quillon"));

            // the training state: a checkpoint of the same Fulcrum model, with Adam's state beside the adapter
            String state = "tinker://" + model + "/weights/resume";
            assertEquals(state, result.getString("state_path"), output);
            // an RL loop on samples of the current weights: the sampler's logprobs are the training ones (llama.cpp
            // and torch on the same quantized weights), Adam steps on
            List<Map<String, Object>> rl = result.getList("rl");
            assertEquals(2, rl.size(), output);
            for (int i = 0; i < rl.size(); i++) {
                assertEquals(4, ((List<?>) rl.get(i).get("rewards")).size(), output);
                assertTrue(((Number) rl.get(i).get("mean_logprob_gap")).doubleValue() < 0.3, output);
                assertTrue(((Number) rl.get(i).get("loss")).doubleValue() != 0, "rewards differ: " + output);
                assertEquals(result.getDouble("reference.step") + 1 + i, ((Number) rl.get(i).get("step")).doubleValue(),
                        output);
            }
            // the REST client: the caller's runs and their saved weights; deleted ones are gone
            assertTrue(result.getList("runs").contains(model), output);
            assertEquals(4, result.getInt("run.lora_rank"), output);
            assertEquals("weights/resume", result.getString("run.last_checkpoint"), output);
            assertEquals("sampler_weights/rl-1", result.getString("run.last_sampler_checkpoint"), output);
            assertEquals(
                    List.of("sampler_weights/facts", "weights/resume", "sampler_weights/rl-0", "sampler_weights/rl-1"),
                    result.getList("checkpoints"), output);
            assertEquals(List.of("sampler_weights/facts", "weights/resume", "sampler_weights/rl-1"),
                    result.getList("after_delete"), output);
            assertEquals(List.of("sampler_weights/facts", "weights/resume"), result.getList("after_path_delete"),
                    output);
            assertTrue(result.getList("user_checkpoints").contains(state), output);
            // sizes: the bytes of the files; training state holds AdamW's moments besides the adapter
            long facts = result.getLong("checkpoint_sizes.'sampler_weights/facts'");
            long stateSize = result.getLong("checkpoint_sizes.'weights/resume'");
            assertTrue(facts > 0 && stateSize > facts, output);
            assertEquals(stateSize, result.getLong("run.last_checkpoint_size"), output);
            assertEquals(stateSize, result.getLong("user_checkpoint_sizes.'" + state + "'"), output);
            // the archive: the SDK's signed URL, valid 15 minutes, and `tinker checkpoint download` (the SDK's CLI)
            // unpacking the training state: the checkpoint's files, as many bytes as listed, in a tar a little longer
            assertTrue(result.getString("archive_url.url").contains("/tinker/api/v1/checkpoint_archives/"), output);
            double left = result.getDouble("archive_url.seconds_left");
            assertTrue(left > 600 && left <= 900, output);
            assertEquals(0, result.getInt("downloaded.exit"), output);
            Map<String, Integer> unpacked = result.getMap("downloaded.files");
            assertTrue(unpacked.keySet()
                    .containsAll(List.of("adapter_config.json", "adapter_model.safetensors", "optimizer.pt")), output);
            assertEquals(stateSize, unpacked.values().stream().mapToLong(Integer::longValue).sum(), output);
            assertTrue(result.getLong("downloaded.printed.file_size_bytes") > stateSize, output);
            assertTrue(result.getString("deleted_sampling").contains("were deleted"), output);
            assertEquals(404, result.getInt("deleted_new_client"), output);
            assertEquals(SmolLm2TrainingTest.BASE_MODEL, result.getString("sampler_base"), output);
            assertEquals("tinker://" + model + "/sampler_weights/facts", result.getString("sampler.model_path"));
            assertEquals(List.of(model), result.getList("session_runs"), output);
            // the deleted saves' Fulcrum checkpoints went with them: steps 1 (facts) and 2 (resume) remain (and the
            // base, step 0)
            String trainingModel = TrainingClient.as(user)
                    .get("/v1/preview/models?entity=" + user.name() + "&project=facts").then().statusCode(200).extract()
                    .path("data.find { it.name == '" + name + "' }.id");
            TrainingClient.as(user).get("/v1/preview/models/" + trainingModel + "/checkpoints").then().statusCode(200)
                    .body("data.step", containsInAnyOrder(0, 1, 2));
            // another user sees none of it
            Account other = fixtures.user("tinkersdkother");
            as(other).get("/tinker/api/v1/training_runs/" + model).then().statusCode(404);
            as(other).get("/tinker/api/v1/training_runs/" + model + "/checkpoints").then().statusCode(404);
            as(other).delete("/tinker/api/v1/training_runs/" + model + "/checkpoints/weights/resume").then()
                    .statusCode(404);
            as(other).body(Map.of("tinker_path", state)).post("/tinker/api/v1/weights_info").then().statusCode(404);
            as(other).get("/tinker/api/v1/training_runs").then().statusCode(200).body("training_runs", hasSize(0));
            as(other).get("/tinker/api/v1/checkpoints").then().statusCode(200).body("checkpoints", hasSize(0));

            // the worker dies while it holds the model: the model's next operation fails, naming the lost state
            worker.kill();
            // a second worker starts meanwhile (for the state saved before; it claims nothing until then)
            try (FulcrumWorkerProcess.Running second = SmolLm2TrainingTest.worker(base.toString(), "tinker-worker-2")) {
                String request = as(user)
                        .body(Map.of("model_id", model, "seq_id", 1000, "adam_params", Map.of("learning_rate", 1e-3)))
                        .post("/tinker/api/v1/optim_step").then().statusCode(200).extract().path("request_id");
                Response answer = null;
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline) {
                    answer = as(user).body(Map.of("request_id", request)).post("/tinker/api/v1/retrieve_future");
                    if (answer.statusCode() != 408) {
                        break;
                    }
                }
                answer.then().statusCode(200).body("category", equalTo("server"))
                        .body("error", containsString("stopped renewing its lease"))
                        .body("error", containsString("saved weights remain"));
                // and so does every later one
                String later = as(user)
                        .body(Map.of("model_id", model, "seq_id", 1001, "adam_params", Map.of("learning_rate", 1e-3)))
                        .post("/tinker/api/v1/optim_step").then().statusCode(200).extract().path("request_id");
                as(user).body(Map.of("request_id", later)).post("/tinker/api/v1/retrieve_future").then().statusCode(200)
                        .body("error", containsString("stopped renewing its lease"));

                // the saved state remains: a new training client from it, with its optimizer, on another worker, takes
                // exactly the step the lost model took after the save; loaded without the optimizer, Adam starts again
                Map<String, String> resume = new java.util.HashMap<>(env);
                resume.putAll(Map.of("PHASE", "resume", "STATE_PATH", state));
                String resumed = PythonClients.run(REQUIREMENTS, "tinker_sdk/tinker_e2e.py", Duration.ofMinutes(5),
                        resume, second);
                Matcher again = Pattern.compile("RESULT (\\{.*})").matcher(resumed);
                assertTrue(again.find(), resumed + "\n" + second.log());
                System.out.println("Tinker SDK resumed: " + again.group(1));
                JsonPath after = JsonPath.from(again.group(1));
                assertEquals(SmolLm2TrainingTest.BASE_MODEL, after.getString("weights_info.base_model"));
                assertEquals(4, after.getInt("weights_info.lora_rank"));
                for (String key : List.of("loss", "grad_norm", "step", "loss_after")) {
                    double expected = result.getDouble("reference." + key);
                    assertEquals(expected, after.getDouble("with_optimizer." + key), 1e-4 * Math.abs(expected) + 1e-6,
                            key + ": " + resumed);
                }
                assertEquals(result.getDouble("reference.loss"), after.getDouble("without_optimizer.loss"),
                        1e-4 * result.getDouble("reference.loss"), resumed);
                assertEquals(1.0, after.getDouble("without_optimizer.step"), resumed);
                assertFalse(Math.abs(after.getDouble("without_optimizer.loss_after")
                        - result.getDouble("reference.loss_after")) < 1e-4, resumed);
            }
        } finally {
            worker.close();
        }
    }

    /**
     * The newest SDK (0.38.0, its own pinned environment) over protobuf: forward and forward_backward bodies sent as
     * zstd-compressed protobuf, their results and a sample's read as protobuf, equal to what the JSON protocol of
     * 0.18.2 answers for the same model and tokens.
     */
    @Test
    void theNewestSdkTrainsAndSamplesOverProtobuf() throws Exception {
        Account user = fixtures.user("tinkerproto038");
        Map<String, String> env = Map.of("FULCRUM_URL", base.toString(), "FULCRUM_KEY", user.key(), "TINKER_PROJECT",
                "proto", "BASE_MODEL", SmolLm2TrainingTest.BASE_MODEL, "GGUF", RealModels.smolLm2().toString(),
                "FULCRUM_ENTITY", user.name());
        try (FulcrumWorkerProcess.Running worker = SmolLm2TrainingTest.worker(base.toString(), "tinker-worker-038")) {
            String output = PythonClients.run(REQUIREMENTS_038, "tinker_sdk_038/tinker_proto_e2e.py",
                    Duration.ofMinutes(3), env, worker);
            Matcher found = Pattern.compile("RESULT (\\{.*})").matcher(output);
            assertTrue(found.find(), output + "\n" + worker.log());
            JsonPath result = JsonPath.from(found.group(1));
            System.out.println("Tinker SDK 0.38: " + found.group(1));
            assertEquals("0.38.0", result.getString("sdk"));
            List<Integer> lengths = result.getList("datum_lengths", Integer.class);
            // per-token logprobs and losses came back through protobuf: one per token, the loss -logprob (weights 1),
            // summing to the metric
            List<List<Float>> logprobs = result.getList("forward_logprobs");
            List<List<Float>> elementwise = result.getList("forward_elementwise");
            double sum = 0;
            for (int d = 0; d < lengths.size(); d++) {
                assertEquals(lengths.get(d), logprobs.get(d).size(), output);
                for (int t = 0; t < lengths.get(d); t++) {
                    double lp = ((Number) logprobs.get(d).get(t)).doubleValue();
                    assertTrue(lp < 0, output);
                    assertEquals(-lp, ((Number) elementwise.get(d).get(t)).doubleValue(), 1e-5, output);
                    sum -= lp;
                }
            }
            double forwardLoss = result.getDouble("forward_loss");
            assertEquals(forwardLoss, sum, 1e-3 * forwardLoss, output);
            List<Float> losses = result.getList("losses", Float.class);
            // the first step's loss is the forward's (the same weights); training lowers it
            assertEquals(forwardLoss, losses.get(0), 1e-3 * forwardLoss, output);
            assertTrue(losses.get(2) < losses.get(0) && result.getDouble("after_loss") < losses.get(2), output);
            assertEquals(lengths, result.getList("backward_logprobs_lengths"), output);
            assertEquals(3.0, result.getDouble("optim_step"), output);
            assertEquals("float32", result.getString("after_dtype"), output);

            // the JSON protocol (0.18.2's) answers the same logprobs for the same model and tokens
            String model = result.getString("model_id");
            List<List<Integer>> facts = new java.util.ArrayList<>();
            List<Map<String, Object>> data = new java.util.ArrayList<>();
            for (List<Integer> tokens : result.<List<Integer>> getList("facts")) {
                facts.add(tokens);
                int n = tokens.size() - 1;
                data.add(Map.of("model_input",
                        Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", tokens.subList(0, n)))),
                        "loss_fn_inputs",
                        Map.of("target_tokens", Map.of("data", tokens.subList(1, n + 1), "dtype", "int64"), "weights",
                                Map.of("data", java.util.Collections.nCopies(n, 1.0), "dtype", "float32"))));
            }
            String forward = as(user)
                    .body(Map.of("model_id", model, "seq_id", 1000, "forward_input",
                            Map.of("data", data, "loss_fn", "cross_entropy")))
                    .post("/tinker/api/v1/forward").then().statusCode(200).extract().path("request_id");
            JsonPath json = settled(user, forward).jsonPath();
            List<List<Float>> after = result.getList("after_logprobs");
            for (int d = 0; d < facts.size(); d++) {
                List<Number> viaJson = json.getList("loss_fn_outputs[" + d + "].logprobs.data");
                assertEquals(after.get(d).size(), viaJson.size(), output);
                for (int t = 0; t < viaJson.size(); t++) {
                    assertEquals(viaJson.get(t).doubleValue(), ((Number) after.get(d).get(t)).doubleValue(), 1e-5,
                            "datum " + d + " token " + t + ": " + output);
                }
            }
            assertEquals(result.getDouble("after_loss"), json.getDouble("metrics.'loss:sum'"),
                    1e-4 * result.getDouble("after_loss"), output);

            // the sample (protobuf): tokens with their logprobs, and the same seeded draw through JSON
            List<Map<String, Object>> samples = result.getList("samples");
            assertEquals(2, samples.size(), output);
            String sample = as(user)
                    .body(Map.of("sampling_session_id", result.getString("sampling_session_id"), "seq_id", 1000,
                            "num_samples", 2, "prompt",
                            Map.of("chunks",
                                    List.of(Map.of("type", "encoded_text", "tokens", result.getList("prompt")))),
                            "sampling_params", Map.of("max_tokens", 6, "temperature", 1.0, "seed", 7),
                            "prompt_logprobs", true, "topk_prompt_logprobs", 3, "topk_sample_logprobs", 4))
                    .post("/tinker/api/v1/asample").then().statusCode(200).extract().path("request_id");
            JsonPath drawn = settled(user, sample).jsonPath();
            int sampledInTop = 0;
            for (int i = 0; i < 2; i++) {
                List<?> tokens = (List<?>) samples.get(i).get("tokens");
                List<?> sampled = (List<?>) samples.get(i).get("logprobs");
                assertTrue(!tokens.isEmpty() && tokens.size() == sampled.size(), output);
                // the ids the future named its samples by
                assertTrue(((String) samples.get(i).get("sequence_id")).endsWith(":" + i), output);
                assertEquals(drawn.getList("sequences[" + i + "].tokens"), tokens, output);
                assertEquals(drawn.getString("sequences[" + i + "].stop_reason"), samples.get(i).get("stop_reason"));
                List<Number> viaJson = drawn.getList("sequences[" + i + "].logprobs");
                for (int t = 0; t < tokens.size(); t++) {
                    assertEquals(viaJson.get(t).doubleValue(), ((Number) sampled.get(t)).doubleValue(), 1e-5, output);
                }
                // the 4 likeliest tokens at each sampled position, in the SDK's TopkLogprobs (tokens x 4), likeliest
                // first, as through JSON; the sampled token, where it is among them, with its own logprob (the same
                // distribution), and among them whenever its logprob passes the fourth's
                assertEquals("TopkLogprobs", samples.get(i).get("topk_type"), output);
                assertEquals(List.of(tokens.size(), 4), samples.get(i).get("topk_shape"), output);
                @SuppressWarnings("unchecked")
                List<List<List<Number>>> topk = (List<List<List<Number>>>) samples.get(i).get("topk_logprobs");
                List<List<List<Number>>> topkViaJson = drawn.getList("sequences[" + i + "].topk_logprobs");
                assertEquals(tokens.size(), topk.size(), output);
                for (int t = 0; t < tokens.size(); t++) {
                    List<List<Number>> at = topk.get(t);
                    assertEquals(4, at.size(), output);
                    double own = ((Number) sampled.get(t)).doubleValue();
                    boolean listed = false;
                    for (int j = 0; j < 4; j++) {
                        assertEquals(topkViaJson.get(t).get(j).get(0).intValue(), at.get(j).get(0).intValue(), output);
                        assertEquals(topkViaJson.get(t).get(j).get(1).doubleValue(), at.get(j).get(1).doubleValue(),
                                1e-5, output);
                        assertTrue(j == 0 || at.get(j).get(1).doubleValue() <= at.get(j - 1).get(1).doubleValue(),
                                output);
                        if (at.get(j).get(0).intValue() == ((Number) tokens.get(t)).intValue()) {
                            listed = true;
                            sampledInTop++;
                            assertEquals(own, at.get(j).get(1).doubleValue(), 1e-6, output);
                        }
                    }
                    assertTrue(own <= at.get(0).get(1).doubleValue() + 1e-6, output);
                    assertTrue(listed || own <= at.get(3).get(1).doubleValue() + 1e-6, output);
                }
            }
            assertTrue(sampledInTop > 0, "a sampled token is among the likeliest somewhere: " + output);
            List<Object> promptLogprobs = result.getList("prompt_logprobs");
            assertEquals(result.getList("prompt").size(), promptLogprobs.size(), output);
            assertTrue(promptLogprobs.get(0) == null && promptLogprobs.get(1) != null, output);
            assertEquals(((Number) drawn.getList("prompt_logprobs").get(1)).doubleValue(),
                    ((Number) promptLogprobs.get(1)).doubleValue(), 1e-5, output);
            // the 3 likeliest tokens at each prompt position (none at 0), likeliest first, through protobuf as through
            // JSON; the prompt's own token, where it is among them, with its prompt logprob
            List<List<List<Number>>> top = result.getList("topk_prompt_logprobs");
            List<List<List<Number>>> topViaJson = drawn.getList("topk_prompt_logprobs");
            assertEquals(promptLogprobs.size(), top.size(), output);
            assertTrue(top.get(0) == null && topViaJson.get(0) == null, output);
            int own = 0;
            for (int t = 1; t < top.size(); t++) {
                assertEquals(3, top.get(t).size(), output);
                for (int j = 0; j < 3; j++) {
                    assertEquals(topViaJson.get(t).get(j).get(0).intValue(), top.get(t).get(j).get(0).intValue());
                    assertEquals(topViaJson.get(t).get(j).get(1).doubleValue(), top.get(t).get(j).get(1).doubleValue(),
                            1e-5);
                    assertTrue(j == 0
                            || top.get(t).get(j).get(1).doubleValue() <= top.get(t).get(j - 1).get(1).doubleValue(),
                            output);
                    if (top.get(t).get(j).get(0).intValue() == ((Number) result.getList("prompt").get(t)).intValue()) {
                        own++;
                        assertEquals(((Number) promptLogprobs.get(t)).doubleValue(),
                                top.get(t).get(j).get(1).doubleValue(), 1e-5, output);
                    }
                }
                assertTrue(
                        ((Number) promptLogprobs.get(t)).doubleValue() <= top.get(t).get(0).get(1).doubleValue() + 1e-6,
                        output);
            }
            assertTrue(own > 0, "the prompt's own token is among the likeliest somewhere: " + output);

            // RestClient.copy_weights: a new run of the other project holds the weights under their kind and name,
            // and a sampling client of the copy draws the source's seeded sample
            String copy = result.getString("copy_path");
            assertTrue(copy.matches("tinker://s[a-z0-9]+:train:0/sampler_weights/proto"), output);
            String copyRun = copy.substring("tinker://".length(), copy.indexOf("/sampler_weights/"));
            assertTrue(!copyRun.equals(result.getString("model_id")), output);
            as(user).get("/tinker/api/v1/training_runs/" + copyRun).then().statusCode(200)
                    .body("state", equalTo("copy")).body("project", equalTo(user.name() + "/proto-copies"));
            assertEquals(samples.get(0).get("tokens"), result.getList("copy_tokens"), output);
            // set_checkpoint_ttl_from_tinker_path: an hour from now, read back as expires_at; None removes it
            double ttl = result.getDouble("copy_ttl_seconds");
            assertTrue(ttl > 3500 && ttl <= 3600, output);
            assertEquals(null, result.getString("copy_expires_after_none"), output);
            lastNAndTargets(user, result, drawn, output);
        }
    }

    /**
     * The SDK's sample of only the last N prompt positions, with targets at the last N + 1 (each position's own token
     * and another of the full answer's likeliest there, and -1), read through its own types (protobuf), and the same
     * request through JSON: the earlier positions null, the rest the full answer's; each target cell the logprob the
     * full answer gives that token there, 0 where nothing was asked.
     */
    private static void lastNAndTargets(Account user, JsonPath result, JsonPath full, String output) {
        List<Integer> prompt = result.getList("prompt", Integer.class);
        int n = result.getInt("last_n.n");
        int first = result.getInt("last_n.first_target");
        assertEquals("TensorData", result.getString("last_n.target_type"), output);
        assertEquals("float32", result.getString("last_n.target_dtype"), output);
        assertEquals(List.of(prompt.size() - 1, 3), result.getList("last_n.target_shape"), output);
        String request = as(user)
                .body(Map.of("sampling_session_id", result.getString("sampling_session_id"), "seq_id", 1001, "prompt",
                        Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", prompt))), "sampling_params",
                        Map.of("max_tokens", 1, "temperature", 0.0), "prompt_logprobs", true, "topk_prompt_logprobs", 3,
                        "prompt_logprobs_last_n", n, "target_prompt_logprobs",
                        Map.of("data",
                                result.getList("last_n.targets").stream().flatMap(row -> ((List<?>) row).stream())
                                        .toList(),
                                "dtype", "int64", "shape", List.of(prompt.size() - 1, 3))))
                .post("/tinker/api/v1/asample").then().statusCode(200).extract().path("request_id");
        JsonPath viaJson = settled(user, request).jsonPath();
        assertEquals("float32", viaJson.getString("target_prompt_logprobs.dtype"));
        assertEquals(List.of(prompt.size() - 1, 3), viaJson.getList("target_prompt_logprobs.shape"));
        List<Number> jsonTargets = viaJson.getList("target_prompt_logprobs.data");
        List<Object> fullLogprobs = full.getList("prompt_logprobs");
        List<List<List<Number>>> fullTop = full.getList("topk_prompt_logprobs");
        for (String at : List.of("last_n.", "")) {
            JsonPath answer = at.isEmpty() ? viaJson : result;
            List<Object> logprobs = answer.getList(at + "prompt_logprobs");
            List<List<List<Number>>> top = answer.getList(at + "topk_prompt_logprobs");
            assertEquals(prompt.size(), logprobs.size(), output);
            for (int t = 0; t < prompt.size(); t++) {
                if (t < prompt.size() - n) {
                    assertTrue(logprobs.get(t) == null && top.get(t) == null, t + ": " + output);
                    continue;
                }
                assertEquals(((Number) fullLogprobs.get(t)).doubleValue(), ((Number) logprobs.get(t)).doubleValue(),
                        1e-4, output);
                for (int j = 0; j < 3; j++) {
                    assertEquals(fullTop.get(t).get(j).get(0).intValue(), top.get(t).get(j).get(0).intValue(), output);
                    assertEquals(fullTop.get(t).get(j).get(1).doubleValue(), top.get(t).get(j).get(1).doubleValue(),
                            1e-4, output);
                }
            }
        }
        List<List<Number>> targets = result.getList("last_n.target_logprobs");
        List<Object> lastLogprobs = result.getList("last_n.prompt_logprobs");
        for (int i = 0; i < prompt.size() - 1; i++) {
            int position = i + 1;
            for (int j = 0; j < 3; j++) {
                double cell = targets.get(i).get(j).doubleValue();
                assertEquals(jsonTargets.get(3 * i + j).doubleValue(), cell, 1e-6, output);
                if (position < first || j == 2) {
                    assertEquals(0.0, cell, output); // nothing asked
                } else if (j == 0) {
                    // the prompt's own token: its prompt logprob (the same log-softmax), also before the last N
                    assertEquals(((Number) fullLogprobs.get(position)).doubleValue(), cell, 1e-4, output);
                    if (position >= prompt.size() - n) {
                        assertEquals(((Number) lastLogprobs.get(position)).doubleValue(), cell, 1e-6, output);
                    }
                } else {
                    // another of the likeliest tokens there: its top-k logprob
                    int id = ((Number) ((List<?>) result.getList("last_n.targets").get(i)).get(1)).intValue();
                    List<Number> entry = fullTop.get(position).stream().filter(e -> e.get(0).intValue() == id)
                            .findFirst().orElseThrow();
                    assertTrue(id != prompt.get(position), output);
                    assertEquals(entry.get(1).doubleValue(), cell, 1e-4, output);
                }
            }
        }
    }

    /** A future's settled answer (200), asked again while pending (408). */
    private static Response settled(Account user, String request) {
        Response answer = TinkerCalls.future(user, request);
        answer.then().statusCode(200).body("error", equalTo(null));
        return answer;
    }

    @Test
    void keysSessionsFuturesAndBadRequestsAnswerInTheSdksShapes() {
        Account user = fixtures.user("tinkerproto");
        Account other = fixtures.user("tinkerother");
        // the key: X-API-Key with the SDK's tml- prefix (or a Bearer key)
        given().filter(TINKER).get("/tinker/api/v1/healthz").then().statusCode(401).body("detail",
                containsString("X-API-Key"));
        given().filter(TINKER).header("X-API-Key", user.key()).get("/tinker/api/v1/healthz").then().statusCode(401)
                .body("detail", containsString("tml-"));
        given().filter(TINKER).header("X-API-Key", "tml-fk_wrong").get("/tinker/api/v1/healthz").then().statusCode(401);
        as(user).get("/tinker/api/v1/healthz").then().statusCode(200).body("status", equalTo("ok"));
        given().filter(TINKER).auth().oauth2(user.key()).get("/tinker/api/v1/get_server_capabilities").then()
                .statusCode(200).body("supported_models.model_name", hasItem(SmolLm2TrainingTest.BASE_MODEL));
        as(user).body(Map.of("sdk_version", "0.18.2")).post("/tinker/api/v1/client/config").then().statusCode(200)
                .body("pjwt_auth_enabled", equalTo(false)).body("parallel_fwdbwd_chunks", equalTo(false))
                .body("proto_compress_fwdbwd", equalTo(true));
        as(user).body(Map.of("sdk_version", "0.38.0")).post("/tinker/api/v1/client/dynamic_config").then()
                .statusCode(200).body("sample_cancel_enabled", equalTo(false));
        // a protobuf body that is not a ForwardBackwardRequest, or not the zstd it says it is: 400, not queued
        given().filter(TINKER).header("X-API-Key", "tml-" + user.key()).contentType(TinkerProto.MEDIA_TYPE)
                .body(new byte[] { 10, 50, 1 }).post("/tinker/api/v1/forward_backward").then().statusCode(400)
                .body("detail[0].type", equalTo("protobuf_invalid"));
        given().filter(TINKER).header("X-API-Key", "tml-" + user.key()).contentType(TinkerProto.MEDIA_TYPE)
                .header("Content-Encoding", "zstd").body(new byte[] { 10, 1, 65 })
                .post("/tinker/api/v1/forward_backward").then().statusCode(400)
                .body("detail[0].msg", containsString("zstd"));
        as(user).body(Map.of("events", List.of())).post("/tinker/api/v1/telemetry").then().statusCode(200);

        // sessions: the project of project_id (created), another user's session is unknown
        String session = as(user).body(Map.of("tags", List.of("t"), "project_id", "proto", "sdk_version", "0.18.2"))
                .post("/tinker/api/v1/create_session").then().statusCode(200)
                .body("info_message", containsString(user.name() + "/proto")).extract().path("session_id");
        as(user).body(Map.of("session_id", session)).post("/tinker/api/v1/session_heartbeat").then().statusCode(200);
        as(other).body(Map.of("session_id", session)).post("/tinker/api/v1/session_heartbeat").then().statusCode(404);
        // a project of an entity the caller is no member of
        as(other).body(Map.of("project_id", user.name() + "/proto")).post("/tinker/api/v1/create_session").then()
                .statusCode(403);

        // create_model: checked before anything is made; the same model_seq_id answers the same future
        as(user).body(Map.of("session_id", session, "model_seq_id", 0, "base_model", SmolLm2TrainingTest.BASE_MODEL,
                "lora_config", Map.of("rank", 0))).post("/tinker/api/v1/create_model").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "lora_config", "rank")));
        Map<String, Object> create = Map.of("session_id", session, "model_seq_id", 0, "base_model",
                SmolLm2TrainingTest.BASE_MODEL, "lora_config",
                Map.of("rank", 2, "train_unembed", false, "train_mlp", false, "train_attn", true));
        String future = as(user).body(create).post("/tinker/api/v1/create_model").then().statusCode(200).extract()
                .path("request_id");
        assertEquals(future, as(user).body(create).post("/tinker/api/v1/create_model").then().statusCode(200).extract()
                .path("request_id"));
        String model = session + ":train:0";
        // no worker holds it: pending, waiting for capacity
        as(user).body(Map.of("request_id", future)).post("/tinker/api/v1/retrieve_future").then().statusCode(408)
                .body("queue_state", equalTo("paused_capacity"));
        as(other).body(Map.of("request_id", future)).post("/tinker/api/v1/retrieve_future").then().statusCode(404);
        as(user).body(Map.of("model_id", model)).post("/tinker/api/v1/get_info").then().statusCode(200)
                .body("lora_rank", equalTo(2)).body("model_data.model_name", equalTo(SmolLm2TrainingTest.BASE_MODEL));

        // operations: the same seq_id (a retried POST) is the same future, bad data a 422 naming the field
        Map<String, Object> text = Map.of("type", "encoded_text", "tokens", List.of(1, 2, 3));
        Map<String, Object> datum = Map.of("model_input", Map.of("chunks", List.of(text)), "loss_fn_inputs",
                Map.of("target_tokens", Map.of("data", List.of(2, 3, 4), "dtype", "int64")));
        Map<String, Object> step = Map.of("model_id", model, "seq_id", 1, "forward_backward_input",
                Map.of("data", List.of(datum), "loss_fn", "cross_entropy"));
        String first = as(user).body(step).post("/tinker/api/v1/forward_backward").then().statusCode(200)
                .body("model_id", equalTo(model)).extract().path("request_id");
        assertEquals(first, as(user).body(step).post("/tinker/api/v1/forward_backward").then().statusCode(200).extract()
                .path("request_id"));
        as(user).header("X-Idempotency-Key", "stainless-python-retry-1")
                .body(Map.of("model_id", model, "seq_id", 2, "adam_params", Map.of("learning_rate", 1e-3)))
                .post("/tinker/api/v1/optim_step").then().statusCode(200);
        as(user).body(Map.of("model_id", model, "seq_id", 3, "forward_backward_input",
                Map.of("data",
                        List.of(Map.of("model_input",
                                Map.of("chunks", List.of(Map.of("type", "image", "data", "AA==", "format", "png"))),
                                "loss_fn_inputs", Map.of())),
                        "loss_fn", "cross_entropy")))
                .post("/tinker/api/v1/forward_backward").then().statusCode(422).body("detail[0].loc", equalTo(
                        List.of("body", "forward_backward_input", "data", 0, "model_input", "chunks", 0, "type")));
        as(user).body(Map.of("model_id", model, "seq_id", 3, "forward_backward_input",
                Map.of("data", List.of(datum), "loss_fn", "ppo"))).post("/tinker/api/v1/forward_backward").then()
                .statusCode(422).body("detail[0].loc", hasItem("logprobs"));
        as(user).body(Map.of("model_id", model, "seq_id", 3, "forward_backward_input",
                Map.of("data",
                        List.of(Map.of("model_input", Map.of("chunks", List.of(text)), "loss_fn_inputs",
                                Map.of("target_tokens", Map.of("data", List.of(2, 3), "dtype", "int64")))),
                        "loss_fn", "cross_entropy")))
                .post("/tinker/api/v1/forward_backward").then().statusCode(422)
                .body("detail[0].msg", containsString("one value per token"));
        as(user).body(Map.of("model_id", model, "seq_id", 3, "adam_params", Map.of("beta1", 1.5)))
                .post("/tinker/api/v1/optim_step").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "adam_params", "beta1")));
        as(other).body(step).post("/tinker/api/v1/forward_backward").then().statusCode(404);

        // saves need a name of their own; sampling clients a GGUF base or sampler weights of the caller's models
        as(user).body(Map.of("model_id", model, "seq_id", 4)).post("/tinker/api/v1/save_weights_for_sampler").then()
                .statusCode(422).body("detail[0].loc", equalTo(List.of("body", "path")));
        as(user).body(Map.of("model_id", model, "seq_id", 4, "path", "a/b"))
                .post("/tinker/api/v1/save_weights_for_sampler").then().statusCode(422);
        as(user).body(Map.of("session_id", session, "sampling_session_seq_id", 0, "model_path",
                "tinker://" + model + "/weights/w")).post("/tinker/api/v1/create_sampling_session").then()
                .statusCode(404).body("detail", containsString("No saved weights"));
        as(user).body(Map.of("session_id", session, "sampling_session_seq_id", 0, "model_path", "tinker://" + model))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "model_path")));
        // training state: a name to save, a state of the caller's to load, sampler weights hold none
        as(user).body(Map.of("model_id", model, "seq_id", 4)).post("/tinker/api/v1/save_weights").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "path")));
        as(user).body(Map.of("model_id", model, "seq_id", 4, "path", "tinker://" + model + "/weights/none", "optimizer",
                true)).post("/tinker/api/v1/load_weights").then().statusCode(404);
        as(user).body(Map.of("model_id", model, "seq_id", 4, "path", "tinker://x/weights/y", "optimizer", "yes"))
                .post("/tinker/api/v1/load_weights").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "optimizer")));
        as(user).body(Map.of("tinker_path", "weights/none")).post("/tinker/api/v1/weights_info").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "tinker_path")));
        as(user).get("/tinker/api/v1/training_runs?access_scope=everyone").then().statusCode(422);
        as(user).get("/tinker/api/v1/training_runs/" + model).then().statusCode(200).body("lora_rank", equalTo(2))
                .body("model_owner", equalTo(user.name())).body("last_checkpoint", equalTo(null));
        as(other).get("/tinker/api/v1/training_runs/" + model).then().statusCode(404);
        as(user).get("/tinker/api/v1/sessions/" + session).then().statusCode(200).body("training_run_ids",
                equalTo(List.of(model)));
        as(other).get("/tinker/api/v1/sessions/" + session).then().statusCode(404);
        as(user).body(Map.of("session_id", session, "sampling_session_seq_id", 0, "model_path",
                "tinker://" + model + "/sampler_weights/none")).post("/tinker/api/v1/create_sampling_session").then()
                .statusCode(404);
        as(user).body(Map.of("session_id", session, "sampling_session_seq_id", 0, "base_model", "no-such-model"))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(422);
        Map<String, Object> sampling = Map.of("session_id", session, "sampling_session_seq_id", 0, "base_model",
                SmolLm2TrainingTest.BASE_MODEL);
        String sampler = as(user).body(sampling).post("/tinker/api/v1/create_sampling_session").then().statusCode(200)
                .extract().path("sampling_session_id");
        assertEquals(session + ":sample:0", sampler);
        assertEquals(sampler, as(user).body(sampling).post("/tinker/api/v1/create_sampling_session").then()
                .statusCode(200).extract().path("sampling_session_id"));
        Map<String, Object> prompt = Map.of("chunks", List.of(text));
        as(user).body(Map.of("sampling_session_id", sampler, "prompt", prompt, "sampling_params", Map.of("top_k", 0)))
                .post("/tinker/api/v1/asample").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "sampling_params", "top_k")));
        as(other).body(Map.of("sampling_session_id", sampler, "prompt", prompt)).post("/tinker/api/v1/asample").then()
                .statusCode(404);
        as(user).get("/tinker/api/v1/samplers/" + sampler).then().statusCode(200).body("base_model",
                equalTo(SmolLm2TrainingTest.BASE_MODEL));
        as(other).get("/tinker/api/v1/samplers/" + sampler).then().statusCode(404);
        as(user).body(Map.of("request_id", "req-unknown")).post("/tinker/api/v1/retrieve_future").then()
                .statusCode(404);
    }
}

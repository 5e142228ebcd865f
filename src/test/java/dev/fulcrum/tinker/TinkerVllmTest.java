package dev.fulcrum.tinker;

import static dev.fulcrum.support.TinkerCalls.TINKER;
import static dev.fulcrum.support.TinkerCalls.as;
import static dev.fulcrum.support.TinkerCalls.future;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.ReplicaStub;
import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.TinkerCalls;

/**
 * Tinker sampling on a base model served by vLLM: a {@link ReplicaStub} answers {@code /v1/completions} with vLLM's
 * shape (tokens as {@code token_id:N}, {@code token_logprobs}, {@code finish_reason}/{@code stop_reason},
 * {@code prompt_logprobs} maps) and loads LoRA adapters at run time; the test plays the worker that saves the weights.
 * Also the refusals of a training state that does not fit ({@code load_weights}) and of a delete by a caller who lost
 * the member role of the project's team. Workers train both bases ({@code fulcrum.training.worker-base-models} of the
 * test profile).
 */
@QuarkusTest
class TinkerVllmTest {

    static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;
    static final String BASE = "example/tinker-vllm";
    static final String DOWN = "example/tinker-vllm-down";

    static ReplicaStub vllm;

    static final byte[] CONFIG = TinkerCalls.ADAPTER_CONFIG;
    static final byte[] WEIGHTS = { 1, 2, 3, 4 };
    /** The bytes of saved weights' files, which their listing answers as {@code size_bytes}. */
    static final int FILES_SIZE = CONFIG.length + WEIGHTS.length;

    @Inject
    Fixtures fixtures;

    @BeforeAll
    static void upstream() throws Exception {
        vllm = new ReplicaStub("127.0.0.1", 0);
    }

    @AfterAll
    static void stop() throws Exception {
        vllm.close();
    }

    /** The signed URL {@code archive} redirects to; it expires in 15 minutes, as its {@code Expires} says. */
    private static String archiveUrl(Account user, String archive) {
        Response redirect = as(user).redirects().follow(false).get(archive);
        assertEquals(302, redirect.statusCode(), redirect.asString());
        long left = Duration
                .between(Instant.now(),
                        ZonedDateTime.parse(redirect.header("Expires"), DateTimeFormatter.RFC_1123_DATE_TIME))
                .toSeconds();
        assertTrue(left > 890 && left <= 900, redirect.header("Expires"));
        return redirect.header("Location");
    }

    /** A tar's files, in its order. */
    private static Map<String, byte[]> untar(byte[] tar) throws IOException {
        Map<String, byte[]> files = new LinkedHashMap<>();
        try (TarArchiveInputStream in = new TarArchiveInputStream(new ByteArrayInputStream(tar))) {
            for (TarArchiveEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                files.put(entry.getName(), in.readAllBytes());
            }
        }
        return files;
    }

    private static String sampler(Account user, String session, int seq, String key, String value) {
        return as(user).body(Map.of("session_id", session, "sampling_session_seq_id", seq, key, value))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(200).extract()
                .path("sampling_session_id");
    }

    private static String sample(Account user, String sampler, List<Integer> prompt, Map<String, Object> params,
            Map<String, Object> more) {
        Map<String, Object> body = new java.util.HashMap<>(Map.of("sampling_session_id", sampler, "seq_id", 1, "prompt",
                Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", prompt))), "sampling_params",
                params));
        body.putAll(more);
        return as(user).body(body).post("/tinker/api/v1/asample").then().statusCode(200).extract().path("request_id");
    }

    private static String createModel(Account user, String session, int seq, String base, int rank) {
        return as(user)
                .body(Map.of("session_id", session, "model_seq_id", seq, "base_model", base, "lora_config",
                        Map.of("rank", rank)))
                .post("/tinker/api/v1/create_model").then().statusCode(200).extract().path("request_id");
    }

    /** The worker answers the model's next operation, a save, with the adapter's files; the saved path. */
    private static String save(Account user, String token, String model, String kind, int seq, String name) {
        return TinkerCalls.save(user, token, model, kind, Map.of("seq_id", seq, "path", name), WEIGHTS);
    }

    @Test
    void samplesOnVllmAndItsAdaptersAndRefusesWhatDoesNotFit() throws Exception {
        Catalog.openAiCompatible(BASE, vllm.baseUrl());
        Catalog.openAiCompatible(DOWN, "http://127.0.0.1:9/v1");
        Account lead = fixtures.user("tinkervllmlead");
        Account user = fixtures.user("tinkervllm");
        PlatformEntity team = fixtures.team("tinkervllm", lead);
        fixtures.member(team, user, Role.MEMBER);
        String session = as(user).body(Map.of("project_id", team.name + "/rl", "tags", List.of()))
                .post("/tinker/api/v1/create_session").then().statusCode(200).extract().path("session_id");

        // the base: vLLM gets the prompt's token ids and the sampling parameters, as its extensions name them
        String base = sampler(user, session, 0, "base_model", BASE);
        String sampled = sample(user, base, List.of(1, 5, 9),
                Map.of("max_tokens", 3, "temperature", 0.7, "top_k", 20, "top_p", 0.9, "seed", 7, "stop",
                        List.of("\n\n", 13)),
                Map.of("num_samples", 2, "prompt_logprobs", true, "topk_prompt_logprobs", 1, "topk_sample_logprobs",
                        2));
        JsonPath result = future(user, sampled).then().statusCode(200).extract().jsonPath();
        JsonObject asked = vllm.completions.get(vllm.completions.size() - 1);
        assertEquals(new JsonObject().put("model", "base-model").put("prompt", new JsonArray().add(1).add(5).add(9))
                .put("n", 2).put("max_tokens", 3).put("temperature", 0.7).put("top_p", 0.9).put("top_k", 20)
                .put("seed", 7).put("stop", new JsonArray().add("\n\n")).put("stop_token_ids", new JsonArray().add(13))
                .put("logprobs", 2).put("prompt_logprobs", 1).put("return_tokens_as_token_ids", true)
                .put("stream", false), asked);
        // its tokens, their logprobs and why each stopped are the Tinker answer's
        assertEquals(List.of(300, 301, 13), result.getList("sequences[0].tokens"), result.prettify());
        assertEquals(List.of(-0.25f, -0.5f, -0.75f), result.getList("sequences[0].logprobs"));
        assertEquals("stop", result.getString("sequences[0].stop_reason"));
        assertEquals(List.of(310, 311, 312), result.getList("sequences[1].tokens"));
        assertEquals(List.of(-0.375f, -0.625f, -0.875f), result.getList("sequences[1].logprobs"));
        assertEquals("length", result.getString("sequences[1].stop_reason"));
        assertEquals(Arrays.asList(null, -0.5f, -1.0f), result.getList("prompt_logprobs"));
        for (String field : List.of("topk_prompt_logprobs", "topk_sample_logprobs")) {
            as(user).body(Map.of("sampling_session_id", base, "seq_id", 9, "prompt",
                    Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 2)))),
                    "sampling_params", Map.of("max_tokens", 1), field, 21)).post("/tinker/api/v1/asample").then()
                    .statusCode(422).body("detail[0].loc", equalTo(List.of("body", field)));
        }
        // the 2 likeliest tokens at each sampled position, likeliest first, from vLLM's top_logprobs (the sampled
        // token's entry dropped where it is not among them; its logprob where it is)
        assertEquals(
                List.of(List.of(List.of(7, -0.2f), List.of(300, -0.25f)), List.of(List.of(7, -0.2f), List.of(8, -0.4f)),
                        List.of(List.of(7, -0.2f), List.of(8, -0.4f))),
                result.getList("sequences[0].topk_logprobs"), result.prettify());
        assertEquals(
                List.of(List.of(List.of(7, -0.2f), List.of(310, -0.375f)),
                        List.of(List.of(7, -0.2f), List.of(8, -0.4f)), List.of(List.of(7, -0.2f), List.of(8, -0.4f))),
                result.getList("sequences[1].topk_logprobs"));
        // the likeliest token at each prompt position: vLLM's entries of rank 1 (not the prompt's own, of rank 5)
        assertEquals(Arrays.asList(null, List.of(List.of(7, -0.125f)), List.of(List.of(7, -0.125f))),
                result.getList("topk_prompt_logprobs"));

        // counted as a GGUF sample is: the prompt's tokens once, every sample's tokens
        JsonPath report = null;
        for (int i = 0; i < 50; i++) {
            report = given().filter(Contract.INFERENCE).auth().oauth2(lead.key())
                    .get("/api/v1/usage?entity=" + team.name + "&group_by=model").then().statusCode(200).extract()
                    .jsonPath();
            if (!report.getList("data").isEmpty()) {
                break;
            }
            Thread.sleep(200);
        }
        Map<String, Object> row = report.getMap("data.find { it.kind == 'tinker_sample' }");
        assertEquals(List.of(BASE, 1, 3, 6),
                List.of(row.get("model"), row.get("requests"), row.get("prompt_tokens"), row.get("completion_tokens")),
                report.prettify());

        // vLLM's refusal fails the future as the caller's error, with its message; a server down as the server's
        future(user, sample(user, base, List.of(1, 99999), Map.of("max_tokens", 2), Map.of())).then().statusCode(200)
                .body("category", equalTo("user")).body("error", containsString("Token id 99999 is out of vocabulary"))
                .body("error", containsString(BASE));
        String down = sampler(user, session, 1, "base_model", DOWN);
        future(user, sample(user, down, List.of(1, 2), Map.of("max_tokens", 2), Map.of())).then().statusCode(200)
                .body("category", equalTo("server")).body("error", containsString("cannot be reached"))
                .body("error", containsString(DOWN));

        // only the last prompt position scored: vLLM is asked as before, the earlier entries are left out
        JsonPath last = future(user,
                sample(user, base, List.of(1, 5, 9), Map.of("max_tokens", 3),
                        Map.of("prompt_logprobs", true, "topk_prompt_logprobs", 1, "prompt_logprobs_last_n", 1))).then()
                                .statusCode(200).extract().jsonPath();
        assertEquals(1, vllm.completions.get(vllm.completions.size() - 1).getInteger("prompt_logprobs"));
        assertEquals(Arrays.asList(null, null, -1.0f), last.getList("prompt_logprobs"), last.prettify());
        assertEquals(Arrays.asList(null, null, List.of(List.of(7, -0.125f))), last.getList("topk_prompt_logprobs"));
        // chosen tokens' logprobs: not what vLLM's completions answer, refused before anything is queued; bad values
        // of either field are 422s naming it
        int before = vllm.completions.size();
        Map<String, Object> targets = Map.of("data", List.of(5, -1, 9, 3), "dtype", "int64", "shape", List.of(2, 2));
        Map<String, Object> prompt = Map.of("chunks",
                List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 5, 9))));
        as(user).body(Map.of("sampling_session_id", base, "seq_id", 20, "prompt", prompt, "sampling_params",
                Map.of("max_tokens", 1), "target_prompt_logprobs", targets)).post("/tinker/api/v1/asample").then()
                .statusCode(422).body("detail[0].loc", equalTo(List.of("body", "target_prompt_logprobs")))
                .body("detail[0].msg", containsString("GGUF bases only"))
                .body("detail[0].msg", containsString(BASE + " is served by vLLM"));
        List<Map<String, Object>> refused = List.of(Map.of("prompt_logprobs", true, "prompt_logprobs_last_n", 3),
                Map.of("prompt_logprobs", true, "prompt_logprobs_last_n", 0), Map.of("prompt_logprobs_last_n", 1),
                Map.of("prompt_logprobs", true, "prompt_logprobs_last_n", "1"),
                Map.of("target_prompt_logprobs",
                        Map.of("data", List.of(5, 9), "dtype", "int64", "shape", List.of(2, 2), "sparse_crow_indices",
                                List.of(0, 1, 2), "sparse_col_indices", List.of(0, 1))),
                Map.of("target_prompt_logprobs",
                        Map.of("data", List.of(5, 9), "dtype", "int64", "shape", List.of(1, 2))),
                Map.of("target_prompt_logprobs", Map.of("data", List.of(5, 9), "dtype", "int64", "shape", List.of(2))),
                Map.of("target_prompt_logprobs",
                        Map.of("data", List.of(5, -2), "dtype", "int64", "shape", List.of(2, 1))),
                Map.of("target_prompt_logprobs",
                        Map.of("data", List.of(-1, -1), "dtype", "int64", "shape", List.of(2, 1))),
                Map.of("target_prompt_logprobs",
                        Map.of("data", List.of(0.5, 1), "dtype", "float32", "shape", List.of(2, 1))));
        for (Map<String, Object> more : refused) {
            Map<String, Object> body = new java.util.HashMap<>(Map.of("sampling_session_id", base, "seq_id", 21,
                    "prompt", prompt, "sampling_params", Map.of("max_tokens", 1)));
            body.putAll(more);
            String field = more.containsKey("target_prompt_logprobs") ? "target_prompt_logprobs"
                    : "prompt_logprobs_last_n";
            String detail = as(user).body(body).post("/tinker/api/v1/asample").then().statusCode(422).extract()
                    .path("detail[0].loc[1]");
            assertEquals(field, detail, more.toString());
        }
        assertEquals(before, vllm.completions.size(), "nothing refused reached vLLM");

        // saved weights of a model on the vLLM base: loaded into vLLM at run time, then sampled by the adapter's name
        String workerId = TinkerCalls.worker(ADMIN)
                .body(Map.of("name", Fixtures.unique("tinker-vllm"), "base_models", List.of(BASE)))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        String created = createModel(user, session, 0, BASE, 4);
        String model = session + ":train:0";
        String token = TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?wait=10").then()
                .statusCode(200).body("model_id", equalTo(model)).extract().path("token");
        JsonPath first = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5")
                .then().statusCode(200).extract().jsonPath();
        TinkerCalls.worker(token).body(Map.of("result", Map.of("model_id", model, "type", "create_model")))
                .post("/api/v1/workers/tinker-models/" + model + "/results/" + first.getString("operation.request_id"))
                .then().statusCode(200);
        future(user, created).then().statusCode(200);
        String weights = save(user, token, model, "save_weights_for_sampler", 1, "s1");
        assertEquals("tinker://" + model + "/sampler_weights/s1", weights);
        String adapted = sampler(user, session, 2, "model_path", weights);
        as(user).body(Map.of("sampling_session_id", adapted, "seq_id", 20, "prompt", prompt, "sampling_params",
                Map.of("max_tokens", 1), "target_prompt_logprobs", targets)).post("/tinker/api/v1/asample").then()
                .statusCode(422).body("detail[0].msg", containsString("GGUF bases only"));
        JsonPath fromAdapter = future(user, sample(user, adapted, List.of(4, 2), Map.of("max_tokens", 2), Map.of()))
                .then().statusCode(200).extract().jsonPath();
        assertEquals(List.of(300, 301), fromAdapter.getList("sequences[0].tokens"),
                fromAdapter.prettify() + "\nvLLM's loads " + vllm.loads + "\nits completions " + vllm.completions);
        String adapter = vllm.loads.get(vllm.loads.size() - 1);
        assertTrue(vllm.loadedFrom.get(adapter).contains("/" + team.name + "/rl/"), vllm.loadedFrom.toString());
        assertEquals(adapter, vllm.completions.get(vllm.completions.size() - 1).getString("model"));
        // not asked: only the sampled token's logprob, no top-k
        assertEquals(0, vllm.completions.get(vllm.completions.size() - 1).getInteger("logprobs"));
        assertEquals(null, fromAdapter.getList("sequences[0].topk_logprobs"));

        // a training state loads only into a model of its base model and LoRA settings: 422 on the POST, nothing
        // queued (the seq_id stays free)
        String state = save(user, token, model, "save_weights", 2, "state");
        as(user).body(Map.of("tinker_path", state)).post("/tinker/api/v1/weights_info").then().statusCode(200)
                .body("base_model", equalTo(BASE)).body("lora_rank", equalTo(4));
        createModel(user, session, 1, BASE, 8);
        createModel(user, session, 2, DOWN, 4);
        as(user).body(Map.of("model_id", session + ":train:1", "seq_id", 1, "path", state, "optimizer", true))
                .post("/tinker/api/v1/load_weights").then().statusCode(422)
                .body("detail[0].msg", containsString("saved with rank 4, this model has 8"))
                .body("detail[0].loc", equalTo(List.of("body", "path")));
        as(user).body(Map.of("model_id", session + ":train:2", "seq_id", 1, "path", state))
                .post("/tinker/api/v1/load_weights").then().statusCode(422)
                .body("detail[0].msg", containsString("The state is of base model " + BASE));
        as(user).body(Map.of("model_id", session + ":train:1", "seq_id", 1, "path", state, "optimizer", true))
                .post("/tinker/api/v1/load_weights").then().statusCode(422);
        String waitingStep = as(user)
                .body(Map.of("model_id", session + ":train:1", "seq_id", 1, "adam_params",
                        Map.of("learning_rate", 1e-3)))
                .post("/tinker/api/v1/optim_step").then().statusCode(200).extract().path("request_id");

        // saved weights download as a tar (get_checkpoint_archive_url): a signed URL, valid 15 minutes, that needs
        // no key; another user's weights are a 404; a changed signature or expiry is a 403, a URL without its
        // signature a 422
        String archive = "/tinker/api/v1/training_runs/" + model + "/checkpoints/sampler_weights/s1/archive";
        String url = archiveUrl(user, archive);
        Response download = given().filter(TINKER).urlEncodingEnabled(false).get(url);
        assertEquals(200, download.statusCode(), download.asString());
        assertEquals("application/x-tar", download.contentType());
        byte[] tar = download.asByteArray();
        assertEquals(tar.length, Long.parseLong(download.header("Content-Length")));
        Map<String, byte[]> files = untar(tar);
        assertEquals(List.of("adapter_config.json", "adapter_model.safetensors"), List.copyOf(files.keySet()));
        assertArrayEquals(CONFIG, files.get("adapter_config.json"));
        assertArrayEquals(WEIGHTS, files.get("adapter_model.safetensors"));
        for (String changed : List.of(url.replaceFirst("signature=[^&]*", "signature=" + "A".repeat(43)),
                url.replaceFirst("expires=(\\d+)", "expires=$10"))) {
            given().filter(TINKER).urlEncodingEnabled(false).get(changed).then().statusCode(403).body("detail",
                    containsString("signature is not valid or it expired"));
        }
        given().filter(TINKER).urlEncodingEnabled(false).get(url.replaceFirst("&signature=[^&]*", "")).then()
                .statusCode(422);
        as(fixtures.user("tinkervllmother")).redirects().follow(false).get(archive).then().statusCode(404);

        // deleting saved weights needs the member role on the project's team now, not only when they were made:
        // demoted to viewer or removed from the team, their maker is refused (403) and nothing is deleted. A viewer
        // may still download them; one removed from the team may not (a URL signed before works until it expires)
        String delete = "/tinker/api/v1/training_runs/" + model + "/checkpoints/sampler_weights/s1";
        fixtures.member(team, user, Role.VIEWER);
        as(user).delete(delete).then().statusCode(403);
        archiveUrl(user, archive);
        given().auth().oauth2(lead.key()).delete("/api/v1/teams/" + team.name + "/members/" + user.name()).then()
                .statusCode(204);
        as(user).delete(delete).then().statusCode(403); // not a member: 403, as docs/security.md decides
        as(user).redirects().follow(false).get(archive).then().statusCode(403);
        fixtures.member(team, user, Role.MEMBER);
        as(user).get("/tinker/api/v1/training_runs/" + model + "/checkpoints").then().statusCode(200)
                .body("checkpoints.checkpoint_id", equalTo(List.of("sampler_weights/s1", "weights/state")))
                .body("checkpoints.size_bytes", equalTo(List.of(FILES_SIZE, FILES_SIZE)));
        as(user).delete(delete).then().statusCode(204);
        as(user).get("/tinker/api/v1/training_runs/" + model + "/checkpoints").then().statusCode(200)
                .body("checkpoints.checkpoint_id", equalTo(new ArrayList<>(List.of("weights/state"))));
        given().filter(TINKER).urlEncodingEnabled(false).get(url).then().statusCode(404); // signed, but deleted since

        // unload_model: the worker runs the operations before it, then is told to release the model; its release
        // ends the future; later operations fail as the caller's; another user's unload is a 404
        String step = as(user)
                .body(Map.of("model_id", model, "seq_id", 3, "adam_params", Map.of("learning_rate", 1e-3)))
                .post("/tinker/api/v1/optim_step").then().statusCode(200).extract().path("request_id");
        String unload = as(user).body(Map.of("model_id", model, "type", "unload_model"))
                .post("/tinker/api/v1/unload_model").then().statusCode(200).body("model_id", equalTo(model)).extract()
                .path("request_id");
        as(user).body(Map.of("model_id", model)).post("/tinker/api/v1/unload_model").then().statusCode(200)
                .body("request_id", equalTo(unload));
        as(lead).body(Map.of("model_id", model)).post("/tinker/api/v1/unload_model").then().statusCode(404);
        as(user).body(Map.of("model_id", 7)).post("/tinker/api/v1/unload_model").then().statusCode(422);
        JsonPath next = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5").then()
                .statusCode(200).extract().jsonPath();
        assertEquals("optim_step", next.getString("operation.kind"));
        TinkerCalls.worker(token).body(Map.of("result", Map.of("metrics", Map.of())))
                .post("/api/v1/workers/tinker-models/" + model + "/results/" + next.getString("operation.request_id"))
                .then().statusCode(200);
        future(user, step).then().statusCode(200).body("metrics", equalTo(Map.of()));
        as(user).body(Map.of("request_id", unload)).post("/tinker/api/v1/retrieve_future").then().statusCode(408);
        String reason = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5").then()
                .statusCode(200).body("release", equalTo(true)).body("operation", equalTo(null)).extract()
                .path("reason");
        assertTrue(reason.contains("unload_model"), reason);
        TinkerCalls.worker(token).body(Map.of("reason", reason))
                .post("/api/v1/workers/tinker-models/" + model + "/release").then().statusCode(200);
        future(user, unload).then().statusCode(200).body("model_id", equalTo(model)).body("type",
                equalTo("unload_model"));
        String after = as(user)
                .body(Map.of("model_id", model, "seq_id", 4, "adam_params", Map.of("learning_rate", 1e-3)))
                .post("/tinker/api/v1/optim_step").then().statusCode(200).extract().path("request_id");
        future(user, after).then().statusCode(200).body("category", equalTo("user")).body("error",
                containsString("unloaded by its client"));
        // a model no worker held yet is released at once, and its waiting operations fail, saying why
        String waiting = session + ":train:1";
        future(user,
                as(user).body(Map.of("model_id", waiting)).post("/tinker/api/v1/unload_model").then().statusCode(200)
                        .extract().path("request_id")).then().statusCode(200).body("model_id", equalTo(waiting))
                                .body("type", equalTo("unload_model"));
        future(user, waitingStep).then().statusCode(200).body("category", equalTo("server")).body("error",
                containsString("unloaded by its client (unload_model) before a worker held it"));
    }
}

package dev.fulcrum.tinker;

import static dev.fulcrum.support.TinkerCalls.as;
import static dev.fulcrum.support.TinkerCalls.future;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Catalog;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.NodeScripts;
import dev.fulcrum.support.SmallLimits;
import dev.fulcrum.support.TinkerCalls;

/**
 * Tinker work counted as completions are ({@link SmallLimits}: a monthly quota of 40 tokens, two live training clients
 * per entity), without a real worker: the test plays the worker through the Tinker worker protocol, and samples run on
 * the tiny random GGUF Llama in llama.cpp. A {@code forward_backward}'s tokens and a sample's tokens are usage rows of
 * their own kind in {@code /api/v1/usage}; once the team's quota is used up, samples, training steps and completions
 * are all refused (402, the SDK's error shape); a third live training client of a team fails at once ({@code user}),
 * and a released one makes room. The console's Tinker page shows the caller's sessions and their clients.
 */
@QuarkusTest
@TestProfile(SmallLimits.class)
class TinkerUsageTest {

    static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;
    static final Path WORKER = Path.of("worker").toAbsolutePath();
    static final Path TINY_GGUF = Path.of("target", "fulcrum-worker", "tiny-llama-gguf").toAbsolutePath();

    @Inject
    Fixtures fixtures;

    @BeforeAll
    static void tinyGguf() throws Exception {
        if (!Files.exists(TINY_GGUF.resolve("model.gguf"))) {
            NodeScripts.run(WORKER, Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
            NodeScripts.run(WORKER, Duration.ofMinutes(5), Map.of(),
                    WORKER.resolve(".venv/bin/fulcrum-worker").toString(), "make-tiny-model", TINY_GGUF.toString(),
                    "--gguf");
        }
    }

    private static String session(Account user, String project) {
        return as(user).body(Map.of("project_id", project, "tags", List.of())).post("/tinker/api/v1/create_session")
                .then().statusCode(200).extract().path("session_id");
    }

    private static String createModel(Account user, String session, int seq, String base) {
        return as(user)
                .body(Map.of("session_id", session, "model_seq_id", seq, "base_model", base, "lora_config",
                        Map.of("rank", 4)))
                .post("/tinker/api/v1/create_model").then().statusCode(200).extract().path("request_id");
    }

    private static Map<String, Object> forwardBackward(String model, int seq, int tokens) {
        List<Integer> ids = IntStream.range(0, tokens).map(i -> i % 50).boxed().toList();
        Map<String, Object> datum = Map.of("model_input",
                Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", ids))), "loss_fn_inputs",
                Map.of("target_tokens", Map.of("data", ids, "dtype", "int64", "shape", List.of(tokens))));
        return Map.of("model_id", model, "seq_id", seq, "forward_backward_input",
                Map.of("data", List.of(datum), "loss_fn", "cross_entropy"));
    }

    /** Holds the model as a worker would; its token. */
    private static String claim(String workerId, String model) {
        String token = TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?wait=10").then()
                .statusCode(200).body("model_id", equalTo(model)).extract().path("token");
        JsonPath next = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5").then()
                .statusCode(200).extract().jsonPath();
        assertEquals("create_model", next.getString("operation.kind"));
        TinkerCalls.worker(token).body(Map.of("result", Map.of("model_id", model, "type", "create_model")))
                .post("/api/v1/workers/tinker-models/" + model + "/results/" + next.getString("operation.request_id"))
                .then().statusCode(200);
        return token;
    }

    /** Answers the model's next operation, a forward_backward, as the worker would. */
    private static void answer(String token, String model) {
        JsonPath next = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5").then()
                .statusCode(200).extract().jsonPath();
        assertEquals("forward_backward", next.getString("operation.kind"));
        TinkerCalls.worker(token)
                .body(Map.of("result",
                        Map.of("loss_fn_output_type", "TensorData", "loss_fn_outputs", List.of(), "metrics",
                                Map.of("loss:sum", 1.5))))
                .post("/api/v1/workers/tinker-models/" + model + "/results/" + next.getString("operation.request_id"))
                .then().statusCode(200);
    }

    /** The entity's usage rows by model and kind, once {@code until} holds (usage is written about a second later). */
    private static JsonPath usage(Account user, String entity, java.util.function.Predicate<JsonPath> until)
            throws InterruptedException {
        JsonPath report = null;
        for (int i = 0; i < 50; i++) {
            report = given().filter(Contract.INFERENCE).auth().oauth2(user.key())
                    .get("/api/v1/usage?entity=" + entity + "&group_by=model").then().statusCode(200).extract()
                    .jsonPath();
            if (until.test(report)) {
                return report;
            }
            Thread.sleep(200);
        }
        return report;
    }

    @Test
    void samplesAndTrainingStepsAreUsageAndStopAtTheTeamsQuota() throws Exception {
        Account user = fixtures.user("tinkerusage");
        PlatformEntity team = fixtures.team("tinkerquota", user);
        String gguf = "tinker-usage-gguf";
        Catalog.add(Map.of("id", gguf, "backend", "gguf", "gguf_path", TINY_GGUF.resolve("model.gguf").toString()));
        Catalog.add(Map.of("id", "example/gpu-base", "backend", "openai-compatible", "base_url",
                "http://127.0.0.1:9/v1", "upstream_model", "base-model", "api_key", "vllm-secret"));
        String workerId = TinkerCalls.worker(ADMIN)
                .body(Map.of("name", "tinker-usage", "base_models", List.of("example/gpu-base")))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        String session = session(user, team.name + "/rl");

        // a forward_backward of 12 tokens, answered by the worker: 12 training tokens of the base model
        String created = createModel(user, session, 0, "example/gpu-base");
        String model = session + ":train:0";
        String token = claim(workerId, model);
        future(user, created).then().statusCode(200).body("model_id", equalTo(model));
        String step = as(user).body(forwardBackward(model, 1, 12)).post("/tinker/api/v1/forward_backward").then()
                .statusCode(200).extract().path("request_id");
        answer(token, model);
        future(user, step).then().statusCode(200).body("metrics.'loss:sum'", equalTo(1.5f));

        // a sample of 3 prompt tokens, 2 samples of at most 3 tokens, on the GGUF base: counted as a completion is
        String sampler = as(user).body(Map.of("session_id", session, "sampling_session_seq_id", 0, "base_model", gguf))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(200).extract()
                .path("sampling_session_id");
        Map<String, Object> sample = Map.of("sampling_session_id", sampler, "seq_id", 1, "num_samples", 2, "prompt",
                Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 5, 9)))),
                "sampling_params", Map.of("max_tokens", 3, "temperature", 0));
        String sampled = as(user).body(sample).post("/tinker/api/v1/asample").then().statusCode(200).extract()
                .path("request_id");
        JsonPath result = future(user, sampled).then().statusCode(200).extract().jsonPath();
        int completion = result.getList("sequences[0].tokens").size() + result.getList("sequences[1].tokens").size();
        assertTrue(completion > 0, result.prettify());

        JsonPath report = usage(user, team.name, r -> r.getList("data").size() == 2);
        assertEquals(List.of("example/gpu-base tinker_train", gguf + " tinker_sample"),
                report.getList("data.key").stream().sorted().toList(), report.prettify());
        Map<String, Object> train = report.getMap("data.find { it.kind == 'tinker_train' }");
        assertEquals(List.of("example/gpu-base", 1, 12, 0), List.of(train.get("model"), train.get("requests"),
                train.get("prompt_tokens"), train.get("completion_tokens")));
        Map<String, Object> samples = report.getMap("data.find { it.kind == 'tinker_sample' }");
        assertEquals(List.of(gguf, 1, 3, completion, 0), List.of(samples.get("model"), samples.get("requests"),
                samples.get("prompt_tokens"), samples.get("completion_tokens"), samples.get("failed_requests")));
        // the project's usage: the session's
        given().filter(Contract.INFERENCE).auth().oauth2(user.key())
                .get("/api/v1/usage?entity=" + team.name + "&project=other").then().statusCode(200)
                .body("data.size()", equalTo(0));

        // more samples until the team's 40 tokens are used up: then a sample, a training step and a completion are
        // refused with 402 in their interface's shape (the SDK does not retry a 402)
        int status = 200;
        for (int seq = 2; seq < 12 && status == 200; seq++) {
            Response answer = as(user).body(Map.of("sampling_session_id", sampler, "seq_id", seq, "prompt",
                    Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 5, 9, 11, 13)))),
                    "sampling_params", Map.of("max_tokens", 4))).post("/tinker/api/v1/asample");
            status = answer.statusCode();
            if (status == 200) {
                future(user, answer.path("request_id")).then().statusCode(200);
            } else {
                answer.then().statusCode(402).body("detail", startsWith("You exceeded your current quota"));
            }
        }
        assertEquals(402, status, "the quota stops the samples");
        as(user).body(forwardBackward(model, 2, 12)).post("/tinker/api/v1/forward_backward").then().statusCode(402)
                .body("detail", containsString("quota"));
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                .header("Compat-Project", team.name + "/rl")
                .body(Map.of("model", gguf, "prompt", "Hello", "max_tokens", 2)).post("/v1/completions").then()
                .statusCode(402);
        // the refused requests are usage rows (status 402, no tokens), as the gateway's own refusals are
        JsonPath refused = usage(user, team.name,
                r -> Integer.valueOf(1).equals(r.get("data.find { it.kind == 'tinker_train' }.failed_requests")));
        assertEquals(List.of(2, 1, 12),
                List.of(refused.get("data.find { it.kind == 'tinker_train' }.requests"),
                        refused.get("data.find { it.kind == 'tinker_train' }.failed_requests"),
                        refused.get("data.find { it.kind == 'tinker_train' }.prompt_tokens")),
                refused.prettify());
        assertEquals(1, (int) refused.get("data.find { it.kind == 'tinker_sample' }.failed_requests"),
                refused.prettify());
        // another team's work goes on (its own quota)
        Account other = fixtures.user("tinkerusageother");
        String otherSession = session(other, "p");
        String otherSampler = as(other)
                .body(Map.of("session_id", otherSession, "sampling_session_seq_id", 0, "base_model", gguf))
                .post("/tinker/api/v1/create_sampling_session").then().statusCode(200).extract()
                .path("sampling_session_id");
        String allowed = as(other)
                .body(Map.of("sampling_session_id", otherSampler, "seq_id", 1, "prompt",
                        Map.of("chunks", List.of(Map.of("type", "encoded_text", "tokens", List.of(1, 2)))),
                        "sampling_params", Map.of("max_tokens", 1)))
                .post("/tinker/api/v1/asample").then().statusCode(200).extract().path("request_id");
        future(other, allowed).then().statusCode(200).body("sequences.size()", equalTo(1));

        // the console lists the caller's sessions with their training clients (linked to the Fulcrum training model)
        // and sampling clients; another user sees none of them
        String fulcrumModel = as(user).get("/tinker/api/v1/training_runs/" + model).then().statusCode(200)
                .body("state", equalTo("held")).body("project", equalTo(team.name + "/rl")).extract()
                .path("fulcrum_model_id");
        String modelPage = "/console/projects/" + team.name + "/rl/training/models/" + fulcrumModel;
        String cookie = signIn(user);
        console(cookie).get("/console/tinker").then().statusCode(200)
                .body(containsString("data-id=\"" + session + "\"")).body(containsString("href=\"" + modelPage + "\""))
                .body(containsString(model)).body(containsString(sampler)).body(containsString(gguf))
                .body(containsString(team.name + "/rl"));
        console(cookie).get(modelPage).then().statusCode(200).body(containsString(model.replace(':', '-')));
        // and its usage page shows the Tinker work as rows and series of their own
        console(cookie).get("/console/usage?entity=" + team.name).then().statusCode(200)
                .body(containsString("data-model=\"example/gpu-base\" data-kind=\"tinker_train\""))
                .body(containsString("data-model=\"" + gguf + "\" data-kind=\"tinker_sample\""))
                .body(containsString("example/gpu-base (tinker_train)"));
        console(signIn(other)).get("/console/tinker").then().statusCode(200).body(containsString(otherSession))
                .body(not(containsString(session)));
    }

    private static String signIn(Account account) {
        return given().contentType(ContentType.URLENC).formParam("api_key", account.key()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
    }

    private static RequestSpecification console(String cookie) {
        return given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false);
    }

    @Test
    void aTeamHasAtMostTheLiveTrainingClientsConfigured() throws Exception {
        Account admin = fixtures.user("tinkerlimit");
        Account member = fixtures.user("tinkerlimitmember");
        PlatformEntity team = fixtures.team("tinkerlimit", admin);
        fixtures.member(team, member, Role.MEMBER);
        Catalog.add(Map.of("id", "example/other-base", "backend", "openai-compatible", "base_url",
                "http://127.0.0.1:9/v1", "upstream_model", "base-model", "api_key", "vllm-secret"));
        // two users' sessions of one team: two live models (waiting for a worker) between them
        String first = session(admin, team.name + "/a");
        String second = session(member, team.name + "/b");
        String waiting = createModel(admin, first, 0, "example/other-base");
        createModel(member, second, 0, "example/other-base");
        as(admin).body(Map.of("request_id", waiting)).post("/tinker/api/v1/retrieve_future").then().statusCode(408)
                .body("queue_state", equalTo("paused_capacity"));
        // a third fails at once, in the SDK's shape (RequestFailedError), naming the limit; its retries answer it
        String refused = as(member).header("X-Idempotency-Key", "third-" + member.name())
                .body(Map.of("session_id", second, "model_seq_id", 1, "base_model", "example/other-base"))
                .post("/tinker/api/v1/create_model").then().statusCode(200).extract().path("request_id");
        as(member).header("X-Idempotency-Key", "third-" + member.name())
                .body(Map.of("session_id", second, "model_seq_id", 1, "base_model", "example/other-base"))
                .post("/tinker/api/v1/create_model").then().statusCode(200).body("request_id", equalTo(refused));
        future(member, refused).then().statusCode(200).body("category", equalTo("user"))
                .body("error", containsString("fulcrum.tinker.max-live-models-per-entity = 2"))
                .body("error", containsString(team.name + " has 2 live Tinker training clients"));
        as(member).get("/tinker/api/v1/sessions/" + second).then().statusCode(200).body("training_run_ids",
                equalTo(List.of(second + ":train:0")));
        // a user's own entity is another entity
        String own = createModel(member, session(member, "mine"), 0, "example/other-base");
        as(member).body(Map.of("request_id", own)).post("/tinker/api/v1/retrieve_future").then().statusCode(408);

        // the worker takes the admin's model and releases it: a live model less, room for one more
        String workerId = TinkerCalls.worker(ADMIN)
                .body(Map.of("name", "tinker-limit", "base_models", List.of("example/other-base")))
                .post("/api/v1/workers").then().statusCode(201).extract().path("id");
        String token = TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?wait=10").then()
                .statusCode(200).body("model_id", equalTo(first + ":train:0")).extract().path("token");
        TinkerCalls.worker(token).body(Map.of("reason", "test"))
                .post("/api/v1/workers/tinker-models/" + first + ":train:0/release").then().statusCode(200);
        String again = createModel(member, second, 2, "example/other-base");
        assertNotEquals(refused, again);
        as(member).body(Map.of("request_id", again)).post("/tinker/api/v1/retrieve_future").then().statusCode(408);
        as(member).get("/tinker/api/v1/training_runs/" + second + ":train:2").then().statusCode(200)
                .body("state", equalTo("waiting")).body("project", equalTo(team.name + "/b"))
                .body("fulcrum_model_id", startsWith("model_"));
    }

    @Test
    void aWorkerWithRoomForTwoHoldsTwoClientsModelsAndAThirdWaits() throws Exception {
        Catalog.add(Map.of("id", "example/gpu-base", "backend", "openai-compatible", "base_url",
                "http://127.0.0.1:9/v1", "upstream_model", "base-model", "api_key", "vllm-secret"));
        List<Account> users = IntStream.range(0, 3).mapToObj(i -> fixtures.user("tinkerroom" + i)).toList();
        List<String> sessions = users.stream().map(u -> session(u, "p")).toList();
        List<String> created = IntStream.range(0, 3)
                .mapToObj(i -> createModel(users.get(i), sessions.get(i), 0, "example/gpu-base")).toList();
        String workerId = TinkerCalls.worker(ADMIN)
                .body(Map.of("name", "tinker-room", "base_models", List.of("example/gpu-base"))).post("/api/v1/workers")
                .then().statusCode(201).extract().path("id");
        String claims = "/api/v1/workers/" + workerId + "/tinker-claim?wait=1&max_models=2";
        TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?max_models=0").then()
                .statusCode(422).body(containsString("max_models"));

        // the worker holds the first two users' models at once; each model's token is its own
        List<String> tokens = new java.util.ArrayList<>();
        for (int i = 0; i < 2; i++) {
            String model = sessions.get(i) + ":train:0";
            String token = TinkerCalls.worker(ADMIN).post(claims).then().statusCode(200)
                    .body("model_id", equalTo(model)).extract().path("token");
            tokens.add(token);
            JsonPath next = TinkerCalls.worker(token).post("/api/v1/workers/tinker-models/" + model + "/next?wait=5")
                    .then().statusCode(200).extract().jsonPath();
            TinkerCalls.worker(token).body(Map.of("result", Map.of("model_id", model, "type", "create_model"))).post(
                    "/api/v1/workers/tinker-models/" + model + "/results/" + next.getString("operation.request_id"))
                    .then().statusCode(200);
            future(users.get(i), created.get(i)).then().statusCode(200).body("model_id", equalTo(model));
        }
        String second = sessions.get(1) + ":train:0";
        TinkerCalls.worker(tokens.get(0)).post("/api/v1/workers/tinker-models/" + second + "/heartbeat").then()
                .statusCode(401);
        // no room for the third: it waits
        TinkerCalls.worker(ADMIN).post(claims).then().statusCode(204);
        as(users.get(2)).body(Map.of("request_id", created.get(2))).post("/tinker/api/v1/retrieve_future").then()
                .statusCode(408).body("queue_state", equalTo("paused_capacity"));
        as(users.get(2)).get("/tinker/api/v1/training_runs/" + sessions.get(2) + ":train:0").then().statusCode(200)
                .body("state", equalTo("waiting"));
        // the first one released: room for the third, while the second stays held
        TinkerCalls.worker(tokens.get(0)).body(Map.of("reason", "its session ended"))
                .post("/api/v1/workers/tinker-models/" + sessions.get(0) + ":train:0/release").then().statusCode(200);
        TinkerCalls.worker(ADMIN).post(claims).then().statusCode(200).body("model_id",
                equalTo(sessions.get(2) + ":train:0"));
        as(users.get(1)).get("/tinker/api/v1/training_runs/" + second).then().statusCode(200).body("state",
                equalTo("held"));

        // a worker that goes away during its claim's long poll (it stopped; its connection closed) takes nothing: a
        // model made after that waits for a worker that is there
        try (Socket gone = new Socket("localhost", io.restassured.RestAssured.port)) {
            gone.getOutputStream()
                    .write(("POST /api/v1/workers/" + workerId + "/tinker-claim?wait=10&max_models=3"
                            + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + ADMIN
                            + "\r\nContent-Length: 0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            gone.getOutputStream().flush();
            Thread.sleep(500);
        }
        String late = session(users.get(0), "p");
        createModel(users.get(0), late, 0, "example/gpu-base");
        Thread.sleep(1500);
        as(users.get(0)).get("/tinker/api/v1/training_runs/" + late + ":train:0").then().statusCode(200).body("state",
                equalTo("waiting"));
        TinkerCalls.worker(ADMIN).post("/api/v1/workers/" + workerId + "/tinker-claim?wait=1&max_models=3").then()
                .statusCode(200).body("model_id", equalTo(late + ":train:0"));
    }
}

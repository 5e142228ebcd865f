package dev.fulcrum.automations;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.training.TrainingClient;

/**
 * {@code WEAVE_METRIC_THRESHOLD} automations (issue 58 §2). The loop of docs/automations.md end to end: the official
 * Python {@code weave} SDK runs a {@code weave.Evaluation} ({@code src/test/python/weave_sdk/score_automation_e2e.py});
 * the mean of its scorer's results above 0.9 fires an automation whose webhook is Fulcrum's own API, which adds
 * {@code production} to the checkpoint (step 1 of a trained model), and
 * {@code wandb-artifact:///team/proj/checkpoint:production} then resolves to it, as an artifact and as the model the
 * inference API serves. Then: once per crossing (not on every call), feedback conditions, and bad conditions refused in
 * the contract's shape.
 */
@QuarkusTest
class WeaveMetricAutomationsTest {

    private static final AtomicInteger CALLS = new AtomicInteger();

    @Inject
    AutomationWorld world;

    @Inject
    EntityManager em;

    @TestHTTPResource("/")
    URI base;

    private static Map<String, Object> weave(String op, String metric, String aggregation, Integer window,
            String comparison, double threshold) {
        Map<String, Object> condition = new HashMap<>(Map.of("op_name", op, "metric", metric, "aggregation",
                aggregation, "comparison", comparison, "threshold", threshold));
        if (window != null) {
            condition.put("window", window);
        }
        return condition;
    }

    private static Map<String, Object> doNothing(String name, Map<String, Object> condition) {
        return new HashMap<>(Map.of("name", name, "event", "WEAVE_METRIC_THRESHOLD", "action_type", "DoNothing",
                "weave_metric", condition));
    }

    @Test
    void anEvaluationAboveTheThresholdAddsProductionToTheCheckpointItEvaluated() throws Exception {
        Team team = world.team("weave-loop");
        // a model trained one step: its checkpoints step0 and step1 are versions v0 and v1 of its collection
        String model = TrainingClient.register(team.admin, team.name(), team.project, "checkpoint", "fulcrum-tiny");
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", """
                        {"messages": [{"role": "user", "content": "Say yes."}, {"role": "assistant", "content": "yes"}]}
                        """.getBytes(StandardCharsets.UTF_8), "application/jsonl").multiPart("type", "dataset")
                .post(team.collection("sft-data") + "/versions").then().statusCode(201);
        String job = TrainingClient.as(team.admin)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + team.name() + "/" + team.project + "/sft-data:latest", "config",
                        Map.of("batch_size", 1, "learning_rate", 0.05)))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
        List<Map<String, Object>> trained = TrainingClient.events(team.admin, job, Duration.ofSeconds(60));
        assertEquals("training_ended", trained.get(trained.size() - 1).get("type"), trained.toString());
        String version = "v1";
        // the webhook calls Fulcrum's own API with the API key of a member kept for it, a sealed team secret
        Account bot = world.user("weave-loop-bot");
        world.member(team, bot, Role.MEMBER);
        team.secret("FULCRUM_API_KEY", bot.key());
        String aliases = base.toString().replaceAll("/$", "") + team.collection("checkpoint") + "/versions/" + version
                + "/aliases";
        long hook = team.webhook(aliases, "FULCRUM_API_KEY", null);
        Map<String, Object> promote = AutomationWorld.automation("promote", "WEAVE_METRIC_THRESHOLD", team.name(),
                hook);
        promote.put("weave_metric", weave("exact", "output.correct", "AVERAGE", 4, ">", 0.9));
        promote.put("payload", "{\"alias\": \"production\"}");
        long promoting = team.automation(promote);
        // the same scores as an evaluation's predict_and_score calls carry them, and as feedback on the model's calls
        long scores = team.automation(doNothing("scores",
                weave("Evaluation.predict_and_score", "output.scores.exact.correct", "MIN", 4, ">=", 1)));
        long feedback = team.automation(doNothing("feedback",
                weave("answer", "feedback.[wandb.runnable.exact].payload.output.correct", "AVERAGE", 4, ">", 0.9)));
        team.automation(Map.of("name", "on-upload", "event", "CREATE_ARTIFACT", "action_type", "DoNothing"));
        AutomationWorld.as(team.admin).get(team.automations() + "/" + promoting).then().statusCode(200)
                .body("weave_metric.op_name", equalTo("exact")).body("weave_metric.window", equalTo(4))
                .body("event", equalTo("WEAVE_METRIC_THRESHOLD"));

        String url = base.toString().replaceAll("/$", "");
        String output = PythonClients.run("weave_sdk/score_automation_e2e.py", Duration.ofMinutes(3),
                Map.of("WF_TRACE_SERVER_URL", url, "WANDB_BASE_URL", url, "WANDB_API_KEY", team.admin.key(), "PROJECT",
                        team.name() + "/" + team.project, "WEAVE_USE_SERVER_CACHE", "false", "WEAVE_DISABLE_ANALYTICS",
                        "true", "WANDB_DIR", Path.of("target", "py-clients").toAbsolutePath().toString()));
        java.util.regex.Matcher result = java.util.regex.Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        // the wandb SDK, which cannot read them, lists the project's other automations
        assertEquals(Map.of("on-upload", "CREATE_ARTIFACT"),
                io.restassured.path.json.JsonPath.from(result.group(1)).getMap("automations"), output);

        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> AutomationWorld.as(team.admin).get(team.automations() + "/" + promoting).then()
                        .statusCode(200).body("last_delivery.state", equalTo("succeeded")));
        String ref = "wandb-artifact:///" + team.name() + "/" + team.project + "/checkpoint:production";
        given().filter(Contract.ARTIFACTS).auth().oauth2(team.admin.key()).queryParam("ref", ref)
                .get("/api/v1/artifacts/resolve").then().statusCode(200).body("version", equalTo(version))
                .body("aliases", hasItem("production"));
        // and the inference API serves the checkpoint holding the alias: step1's weights, not the base's
        String prefix = "wandb-artifact:///" + team.name() + "/" + team.project + "/checkpoint:";
        List<Float> production = logprobs(team.admin, prefix + "production");
        assertEquals(logprobs(team.admin, prefix + "step1"), production);
        assertNotEquals(logprobs(team.admin, prefix + "step0"), production);
        assertEquals(logprobs(team.admin, prefix + "v1"), production);
        for (String missing : List.of("staging", "v7", "not%20an%20alias")) {
            given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(team.admin.key())
                    .body(Map.of("model", prefix + missing, "messages",
                            List.of(Map.of("role", "user", "content", "hi"))))
                    .post("/v1/chat/completions").then().statusCode(404).body("error.code", equalTo("model_not_found"));
        }
        // the alias was added by the automation's user, through the webhook, once
        AutomationWorld.as(team.admin).get(team.automations() + "/" + promoting + "/deliveries").then().statusCode(200)
                .body("deliveries.size()", equalTo(1));
        // feedback comes in the SDK's own batches, which may be recorded after the delivery above
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertEquals(1, firingsOf(scores));
            assertEquals(1, firingsOf(feedback));
        });
    }

    /** The log-probabilities of a greedy answer of the model. */
    private static List<Float> logprobs(Account account, String model) {
        return given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(account.key())
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Say yes.")),
                        "temperature", 0, "max_tokens", 4, "logprobs", true))
                .post("/v1/chat/completions").then().statusCode(200).body("model", equalTo(model)).extract()
                .path("choices[0].logprobs.content.logprob");
    }

    @Test
    void itFiresOncePerCrossingNotOnEveryCall() {
        Team team = world.team("weave-cross");
        long onOutput = team.automation(doNothing("judged", weave("judge", "output.score", "AVERAGE", 2, ">=", 0.5)));
        Map<String, Object> lastHour = weave("judge", "feedback.[wandb.annotation.quality].payload.value", "MAX", null,
                ">", 0.5);
        lastHour.put("window_seconds", 3600);
        long onFeedback = team.automation(doNothing("annotated", lastHour));

        complete(team, "judge", 1); // one value: no full window yet
        assertEquals(0, firingsOf(onOutput));
        complete(team, "judge", 1); // mean 1: crosses
        assertEquals(1, firingsOf(onOutput));
        complete(team, "judge", 1, 0.5); // still holds: nothing more
        complete(team, "other", 0, 0); // another op's calls change nothing
        assertEquals(1, firingsOf(onOutput));
        complete(team, "judge", 0, 0); // mean 0: stops holding
        assertEquals(1, firingsOf(onOutput));
        complete(team, "judge", 1, 1); // holds again: fires again
        assertEquals(2, firingsOf(onOutput));

        String call = complete(team, "judge", 0.5).get(0);
        assertEquals(0, firingsOf(onFeedback));
        annotate(team, call, 1);
        annotate(team, call, 1);
        assertEquals(1, firingsOf(onFeedback), "a feedback condition also fires once per crossing");
        annotate(team, call, 0); // the max of the hour still holds
        assertEquals(1, firingsOf(onFeedback));

        // an end that comes before its start counts once the start tells its op
        long late = team.automation(doNothing("late", weave("late", "output.score", "MAX", 1, ">", 0.5)));
        String project = team.name() + "/" + team.project;
        String now = Instant.now().toString();
        weaveApi(team)
                .body(Map
                        .of("end",
                                Map.of("project_id", project, "id", "late-1", "ended_at", now, "output",
                                        Map.of("score", 1), "summary", Map.of())))
                .post("/v2/" + project + "/call/end").then().statusCode(200);
        assertEquals(0, firingsOf(late));
        weaveApi(team).body(Map.of("start",
                Map.of("project_id", project, "id", "late-1", "trace_id", "late-1", "op_name",
                        "weave:///" + project + "/op/late:abc", "started_at", now, "inputs", Map.of(), "attributes",
                        Map.of())))
                .post("/v2/" + project + "/call/start").then().statusCode(200);
        assertEquals(1, firingsOf(late));

        // the event log shows the crossings
        given().filter(Contract.EVENTS).auth().oauth2(team.admin.key()).get(team.projectPath() + "/events").then()
                .statusCode(200).body("events.findAll { it.type == 'WEAVE_METRIC_THRESHOLD' }.size()", equalTo(4));
    }

    @Test
    void badConditionsAreRefusedInTheContractsShape() {
        Team team = world.team("weave-bad");
        Map<String, Object> unknownAggregation = doNothing("x", weave("judge", "output.score", "MEDIAN", 3, ">", 1));
        AutomationWorld.as(team.admin).body(unknownAggregation).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("weave_metric.aggregation"));
        AutomationWorld.as(team.admin).body(doNothing("x", weave("judge", "output.score", "AVERAGE", 0, ">", 1)))
                .post(team.automations()).then().statusCode(422).body("errors.field", hasItem("weave_metric.window"));
        Map<String, Object> noOp = weave("judge", "output.score", "AVERAGE", 3, ">", 1);
        noOp.remove("op_name");
        AutomationWorld.as(team.admin).body(doNothing("x", noOp)).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("weave_metric.op_name"));
        Map<String, Object> twoWindows = weave("judge", "output.score", "AVERAGE", 3, ">", 1);
        twoWindows.put("window_seconds", 60);
        AutomationWorld.as(team.admin).body(doNothing("x", twoWindows)).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("weave_metric.window"));
        AutomationWorld.as(team.admin).body(doNothing("x", weave("judge", "scores.exact", "AVERAGE", 3, ">", 1)))
                .post(team.automations()).then().statusCode(422).body("errors.field", hasItem("weave_metric.metric"));
        AutomationWorld.as(team.admin)
                .body(Map.of("name", "x", "event", "WEAVE_METRIC_THRESHOLD", "action_type", "DoNothing"))
                .post(team.automations()).then().statusCode(422).body("errors.field", hasItem("weave_metric"));
        Map<String, Object> onRun = doNothing("x", weave("judge", "output.score", "AVERAGE", 3, ">", 1));
        onRun.put("event", "RUN_STATE");
        AutomationWorld.as(team.admin).body(onRun).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("weave_metric"));
        // project admins only, as every project automation
        Account member = world.user("weave-bad-member");
        world.member(team, member, Role.MEMBER);
        AutomationWorld.as(member).body(doNothing("x", weave("judge", "output.score", "AVERAGE", 3, ">", 1)))
                .post(team.automations()).then().statusCode(403);
        // a change of the condition is checked as on create
        long id = team.automation(doNothing("ok", weave("judge", "output.score", "AVERAGE", 3, ">", 1)));
        AutomationWorld.as(team.admin).body(Map.of("weave_metric", weave("judge", "output", "AVERAGE", -1, ">", 1)))
                .patch(team.automations() + "/" + id).then().statusCode(422)
                .body("errors.field", hasItems("weave_metric.window"));
        AutomationWorld.as(team.admin)
                .body(Map.of("weave_metric", weave("judge", "feedback.[note].payload", "MAX", 5, "<=", 2)))
                .patch(team.automations() + "/" + id).then().statusCode(200)
                .body("weave_metric.metric", equalTo("feedback.[note].payload"))
                .body("weave_metric.aggregation", equalTo("MAX"));
    }

    /** Ends a call of {@code op} with output {@code {"score": s}} for each score, one after the other; their ids. */
    private List<String> complete(Team team, String op, double... scores) {
        String project = team.name() + "/" + team.project;
        List<Map<String, Object>> batch = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (double score : scores) {
            String id = "call-" + CALLS.incrementAndGet();
            Instant ended = Instant.now().plusMillis(ids.size());
            batch.add(Map.of("project_id", project, "id", id, "trace_id", id, "op_name",
                    "weave:///" + project + "/op/" + op + ":abc", "started_at", ended.minusMillis(5).toString(),
                    "ended_at", ended.toString(), "inputs", Map.of(), "output", Map.of("score", score), "summary",
                    Map.of()));
            ids.add(id);
        }
        weaveApi(team).body(Map.of("batch", batch)).post("/v2/" + project + "/calls/complete").then().statusCode(200);
        return ids;
    }

    private void annotate(Team team, String call, double value) {
        String project = team.name() + "/" + team.project;
        weaveApi(team)
                .body(Map.of("project_id", project, "weave_ref", "weave:///" + project + "/call/" + call,
                        "feedback_type", "wandb.annotation.quality", "payload", Map.of("value", value)))
                .post("/feedback/create").then().statusCode(200);
    }

    private static RequestSpecification weaveApi(Team team) {
        return given().filter(Contract.DATASETS).auth().oauth2(team.admin.key()).contentType(ContentType.JSON);
    }

    private long firingsOf(long automationId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em
                        .createNativeQuery("select count(*) from automation_firings where automation_id = ?1")
                        .setParameter(1, automationId).getSingleResult()).longValue());
    }
}

package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * Stopping a run that the official {@code wandb} SDK is logging ({@code src/test/python/wandb_sdk/stop_e2e.py}): a
 * member asks through the runs API while the script logs, the SDK's process is interrupted within its poll interval,
 * and the run ends {@code killed}; the SDK's own {@code run.stop()} ({@code StopRun}) does the same to another run
 * logged at the same time by another process. Viewers and strangers are refused.
 */
@QuarkusTest
class WandbRunStopSdkTest {

    static final String SCRIPT = "wandb_sdk/stop_e2e.py";

    static final String STOP = "mutation StopRun($id: ID!) { stopRun(input: {id: $id}) { success } }";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @Test
    void aStopAskedByAMemberStopsTheSdksProcessAndTheRunEndsKilled() throws Exception {
        Account admin = fixtures.user("stopper");
        PlatformEntity team = fixtures.team("stopper-team", admin);
        Account viewer = fixtures.user("stopper-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        Account stranger = fixtures.user("stopper-stranger");
        String project = "stops";
        String runId = Fixtures.unique("stop").replace('_', '-').toLowerCase();
        // both stops at once, each in its own process: the SDK polls for a stop every 15 s or so
        CompletableFuture<String> asked = script(admin, team.name, project, runId, "test");
        CompletableFuture<String> bySdk = script(admin, team.name, project, runId + "-2", "sdk");
        String run = "/api/v1/entities/" + team.name + "/projects/" + project + "/runs/" + runId;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (WandbSdkTest.as(admin, Contract.RUNS).get(run).statusCode() != 200
                || WandbSdkTest.as(admin, Contract.RUNS).get(run).then().extract().path("history_rows").equals(0)) {
            assertTrue(System.nanoTime() < deadline && !asked.isDone(), "the SDK's run never started logging");
            TimeUnit.MILLISECONDS.sleep(200);
        }
        WandbSdkTest.as(admin, Contract.RUNS).get(run + "/stop").then().statusCode(200)
                .body("stop_requested_at", nullValue()).body("state", equalTo("running"));
        // refused to a viewer and a stranger, before the member asks
        WandbSdkTest.as(viewer, Contract.RUNS).post(run + "/stop").then().statusCode(403);
        WandbSdkTest.as(stranger, Contract.RUNS).post(run + "/stop").then()
                .statusCode(anyOf(equalTo(403), equalTo(404)));
        String storageId = WandbNodes.runId(runId, project, team.name);
        WandbGraphqlTest.graphql(viewer, STOP, Map.of("id", storageId)).then().statusCode(403)
                .body("errors[0].extensions.status", equalTo(403));
        WandbGraphqlTest.graphql(admin, STOP, Map.of("id", "not-a-run-id")).then().statusCode(422)
                .body("errors[0].extensions.status", equalTo(422));
        WandbSdkTest.as(viewer, Contract.RUNS).get(run + "/stop").then().statusCode(200).body("stop_requested_at",
                nullValue());

        WandbSdkTest.as(admin, Contract.RUNS).post(run + "/stop").then().statusCode(200)
                .body("stop_requested_at", notNullValue()).body("run", equalTo(runId));

        stoppedWithin(asked.get(3, TimeUnit.MINUTES), runId);
        stoppedWithin(bySdk.get(3, TimeUnit.MINUTES), runId + "-2");
        WandbSdkTest.as(admin, Contract.RUNS).get(run).then().statusCode(200).body("state", equalTo("killed"));
        WandbSdkTest.as(admin, Contract.RUNS).get(run + "/stop").then().statusCode(200).body("state", equalTo("killed"))
                .body("stop_requested_at", notNullValue());
        // asking again once it ended changes nothing
        WandbSdkTest.as(admin, Contract.RUNS).post(run + "/stop").then().statusCode(200).body("state",
                equalTo("killed"));
        WandbSdkTest.as(admin, Contract.RUNS).get(run + "-2").then().statusCode(200).body("state", equalTo("killed"));
    }

    /** The stop_e2e.py script, logging the run until the stopper (the test or the SDK itself) stops it. */
    private CompletableFuture<String> script(Account user, String team, String project, String runId, String stopper) {
        Map<String, String> env = WandbSdkTest.sdkEnv(base, user, team, project);
        env.put("RUN_ID", runId);
        env.put("STOPPER", stopper);
        return CompletableFuture.supplyAsync(() -> {
            try {
                return PythonClients.run(SCRIPT, Duration.ofMinutes(3), env);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, task -> new Thread(task, "stop-e2e-" + stopper).start()); // not the common pool: one thread on two cores
    }

    /** The script's run was stopped within 30 s of the ask, as the SDK's poll interval allows. */
    private static void stoppedWithin(String output, String runId) {
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        assertTrue(read.getDouble("stopped_after") < 30, output);
        assertTrue(runId.equals(read.getString("run")), output);
    }
}

package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.equalTo;
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
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * The public API of the official {@code wandb} SDK, unchanged ({@code src/test/python/wandb_sdk/api_e2e.py}):
 * {@code Api().runs(...)} with filters, orders and pages, {@code run.scan_history()} and {@code run.update()}; the
 * update is the runs API's run.
 */
@QuarkusTest
class WandbApiSdkTest {

    static final String SCRIPT = "wandb_sdk/api_e2e.py";

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @Test
    void thePublicApiListsScansAndUpdatesRuns() throws Exception {
        Account admin = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", admin);
        String project = "sdk-api";
        Map<String, String> env = WandbSdkTest.sdkEnv(base, admin, team.name, project);

        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5), env);
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        assertTrue(read.getString("refused").contains("Unsupported filter operator $where"), output);

        String run = "/api/v1/entities/" + team.name + "/projects/" + project + "/runs/" + read.getString("runs.alpha");
        WandbSdkTest.as(admin, Contract.RUNS).get(run).then().statusCode(200).body("state", equalTo("finished"))
                .body("config.batch", equalTo(64));
        WandbSdkTest.as(admin, Contract.RUNS).get(run + "/summary").then().statusCode(200).body("verdict",
                equalTo("good"));
    }
}

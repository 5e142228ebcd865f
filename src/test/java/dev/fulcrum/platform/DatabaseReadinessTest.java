package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.lessThan;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

import dev.fulcrum.platform.database.DatabaseHealth;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;

/**
 * Readiness while PostgreSQL does not answer: every PostgreSQL process is stopped (SIGSTOP), as a hung or paused
 * database would be; readiness answers DOWN within 2 s, and UP again once it runs (SIGCONT).
 */
@QuarkusTest
@TestProfile(OperatorSettings.class)
class DatabaseReadinessTest {

    @Inject
    DatabaseHealth databaseHealth;

    @Test
    void readinessIsDownWithinTwoSecondsWhileTheDatabaseIsStoppedAndUpWhenItRunsAgain() throws Exception {
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.find { it.name == 'Database' }.status", equalTo("UP"));
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v1/system-check")
                .then().body("database.success", equalTo(true));

        List<String> postgres = postgresProcesses();
        try {
            signal("-STOP", postgres);
            for (int probe = 0; probe < 3; probe++) { // a check still stuck does not slow the next ones
                given().get("/q/health/ready").then().time(lessThan(2000L)).statusCode(503)
                        .body("status", equalTo("DOWN"))
                        .body("checks.find { it.name == 'Database' }.status", equalTo("DOWN"))
                        .body("checks.find { it.name == 'Database' }.data.error",
                                containsString("no answer within 1000 ms"));
            }
            // the system-check group (what /v1/system-check renders) says the same, its queues unread
            given().get("/q/health/group/system-check").then().time(lessThan(2000L)).statusCode(503)
                    .body("checks.find { it.name == 'Database' }.status", equalTo("DOWN"))
                    .body("checks.find { it.name == 'cpu_queue' }.data.error", containsString("queue unreadable"));
            DatabaseHealth.Result systemCheck = databaseHealth.check(); // what /v1/system-check reports
            assertFalse(systemCheck.up());
            assertTrue(systemCheck.took().toMillis() < 2000, "bounded: " + systemCheck.took());
        } finally {
            signal("-CONT", postgres);
        }
        await("ready again after the database runs").atMost(Duration.ofSeconds(20))
                .until(() -> given().get("/q/health/ready").statusCode() == 200);
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
        given().get("/q/health/group/system-check").then().body("checks.find { it.name == 'Database' }.status",
                equalTo("UP"));
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v1/system-check")
                .then().body("database.success", equalTo(true));
    }

    /** The postmaster of the test database and every process it started (the connections' backends). */
    private static List<String> postgresProcesses() throws IOException {
        Path dataDir = Path.of(ConfigProvider.getConfig().getValue("fulcrum.data-dir", String.class));
        long postmaster = Long.parseLong(Files.readAllLines(dataDir.resolve("postgres/postmaster.pid")).get(0).trim());
        List<String> pids = new ArrayList<>();
        ProcessHandle handle = ProcessHandle.of(postmaster).orElseThrow();
        pids.add(Long.toString(handle.pid()));
        handle.descendants().forEach(child -> pids.add(Long.toString(child.pid())));
        return pids;
    }

    private static void signal(String signal, List<String> pids) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kill", signal));
        command.addAll(pids);
        Process kill = new ProcessBuilder(command).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS), "kill " + signal);
    }
}

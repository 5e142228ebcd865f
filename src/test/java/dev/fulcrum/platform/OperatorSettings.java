package dev.fulcrum.platform;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Settings an operator switches on, one application for the tests of them (one start instead of one each): traces
 * recorded (into the in-memory exporter) and the log written as JSON lines to {@link #LOG_FILE}; short connection
 * timeouts (a header within 1 s, an idle connection closed after 4 s, a database health check of 1 s). The
 * application's database is its own, so that {@link DatabaseReadinessTest} may stop it.
 */
public class OperatorSettings implements QuarkusTestProfile {

    static final String LOG_FILE = "target/observability-test/fulcrum.json.log";

    @Override
    public Map<String, String> getConfigOverrides() {
        // asked for as an operator would without an exporter: the SDK and the JDBC spans on, every span sampled
        return Map.ofEntries(Map.entry("quarkus.otel.sdk.disabled", "false"),
                Map.entry("quarkus.datasource.jdbc.telemetry.enabled", "true"),
                Map.entry("quarkus.otel.traces.sampler", "always_on"),
                Map.entry("quarkus.otel.bsp.schedule.delay", "50ms"), Map.entry("quarkus.log.file.enabled", "true"),
                Map.entry("quarkus.log.file.path", LOG_FILE), Map.entry("quarkus.log.file.json.enabled", "true"),
                Map.entry("quarkus.log.file.rotation.rotate-on-boot", "false"),
                Map.entry("fulcrum.http.header-timeout", "1S"), Map.entry("quarkus.http.idle-timeout", "4S"),
                Map.entry("fulcrum.health.database-timeout", "1S"));
    }
}

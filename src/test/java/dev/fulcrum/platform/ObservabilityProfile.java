package dev.fulcrum.platform;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Traces recorded (into the in-memory exporter) and the log written as JSON lines to {@link #LOG_FILE}, as an operator
 * would switch them on.
 */
public class ObservabilityProfile implements QuarkusTestProfile {

    static final String LOG_FILE = "target/observability-test/fulcrum.json.log";

    @Override
    public Map<String, String> getConfigOverrides() {
        // asked for as an operator would without an exporter: the SDK and the JDBC spans on, every span sampled
        return Map.of("quarkus.otel.sdk.disabled", "false", "quarkus.datasource.jdbc.telemetry.enabled", "true",
                "quarkus.otel.traces.sampler", "always_on", "quarkus.otel.bsp.schedule.delay", "50ms",
                "quarkus.log.file.enabled", "true", "quarkus.log.file.path", LOG_FILE, "quarkus.log.file.json.enabled",
                "true", "quarkus.log.file.rotation.rotate-on-boot", "false");
    }
}

package dev.fulcrum.platform;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Short connection timeouts, and an application of its own (with its own database) for tests that freeze it. */
public class ShortTimeouts implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("fulcrum.http.header-timeout", "1S", "quarkus.http.idle-timeout", "4S",
                "fulcrum.health.database-timeout", "1S");
    }
}

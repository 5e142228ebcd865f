package dev.fulcrum.support;

import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * The address of the fake Hugging Face Hub ({@code inference.hub.FakeHub}) as the application's Hub endpoint: a free
 * port ({@link ReservedPort}) chosen here, where the test that pulls models starts its fake Hub. Nothing listens there
 * otherwise, so a pull of another test would fail as with a Hub that cannot be reached.
 */
public class FakeHubPort implements QuarkusTestResourceLifecycleManager {

    /** The configuration property holding the port. */
    public static final String PORT_PROPERTY = "fake-hub.port";

    @Override
    public Map<String, String> start() {
        int port = ReservedPort.free();
        return Map.of("fulcrum.inference.hub.endpoint", "http://127.0.0.1:" + port, PORT_PROPERTY,
                String.valueOf(port));
    }

    @Override
    public void stop() {
    }
}

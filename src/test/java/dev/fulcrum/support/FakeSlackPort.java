package dev.fulcrum.support;

import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * The address of the fake Slack Web API ({@link FakeSlack}) as the application's
 * {@code fulcrum.webhooks.slack-api-url}: a free port reserved here, where a test that posts Slack notifications starts
 * its fake Slack. Nothing listens there otherwise, so a notification of another test fails as with a Slack that cannot
 * be reached.
 */
public class FakeSlackPort implements QuarkusTestResourceLifecycleManager {

    /** The configuration property holding the port. */
    public static final String PORT_PROPERTY = "fake-slack.port";

    @Override
    public Map<String, String> start() {
        int port = ReservedPort.free();
        return Map.of("fulcrum.webhooks.slack-api-url", "http://127.0.0.1:" + port + "/api", PORT_PROPERTY,
                String.valueOf(port));
    }

    @Override
    public void stop() {
    }
}

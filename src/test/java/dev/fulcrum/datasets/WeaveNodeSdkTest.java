package dev.fulcrum.datasets;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.NodeScripts;
import dev.fulcrum.support.TestCertificate;

/**
 * The official Weave TypeScript SDK ({@code weave} 0.11.1 from npm, installed here with {@code npm ci}) against this
 * server, over HTTP and over HTTPS with a test certificate: {@code src/test/node/weave-sdk/e2e.mjs}. Fails when the
 * script fails.
 */
@QuarkusTest
@QuarkusTestResource(value = TestCertificate.class, restrictToAnnotatedClass = true)
class WeaveNodeSdkTest {

    private static final Path SCRIPT_DIR = Path.of("src", "test", "node", "weave-sdk");

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @TestHTTPResource(value = "/", tls = true)
    URI secure;

    @Test
    void officialSdkWorksUnchanged() throws Exception {
        Account member = fixtures.user("weave-sdk");
        PlatformEntity team = fixtures.team("weave-sdk-lab", fixtures.user("weave-sdk-admin"));
        fixtures.member(team, member, Role.MEMBER);
        Account viewer = fixtures.user("weave-sdk-viewer");
        fixtures.member(team, viewer, Role.VIEWER);

        String certificate = ConfigProvider.getConfig().getValue(TestCertificate.PEM, String.class);
        NodeScripts.run(SCRIPT_DIR, Duration.ofMinutes(5), Map.of(), "npm", "ci", "--no-audit", "--no-fund");
        String http = "http://localhost:" + base.getPort();
        String https = "https://localhost:" + secure.getPort();
        String output = NodeScripts.run(SCRIPT_DIR, Duration.ofMinutes(3),
                Map.of("TRACE_URL", http, "HTTPS_URL", https, "NODE_EXTRA_CA_CERTS", certificate, "API_KEY",
                        member.key(), "USERNAME", member.name(), "VIEWER_KEY", viewer.key(), "PROJECT",
                        team.name + "/proj"),
                "node", "e2e.mjs");
        assertTrue(output.contains("weave-sdk e2e: ok"), output);
    }
}

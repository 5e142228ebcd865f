package dev.fulcrum.datasets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
        run(Duration.ofMinutes(5), Map.of(), "npm", "ci", "--no-audit", "--no-fund");
        String http = "http://localhost:" + base.getPort();
        String https = "https://localhost:" + secure.getPort();
        String output = run(Duration.ofMinutes(3),
                Map.of("TRACE_URL", http, "HTTPS_URL", https, "NODE_EXTRA_CA_CERTS", certificate, "API_KEY",
                        member.key(), "USERNAME", member.name(), "VIEWER_KEY", viewer.key(), "PROJECT",
                        team.name + "/proj"),
                "node", "e2e.mjs");
        assertTrue(output.contains("weave-sdk e2e: ok"), output);
    }

    private static String run(Duration timeout, Map<String, String> env, String... command)
            throws IOException, InterruptedException {
        File log = Files.createTempFile("weave-sdk", ".log").toFile();
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(SCRIPT_DIR.toFile())
                .redirectErrorStream(true).redirectOutput(log);
        builder.environment().putAll(env);
        builder.environment().remove("WANDB_BASE_URL");
        Process process = builder.start();
        boolean ended = process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly();
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        Files.delete(log.toPath());
        assertTrue(ended, String.join(" ", command) + " did not end in " + timeout + ":\n" + output);
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}

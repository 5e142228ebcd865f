package dev.fulcrum.inference;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PythonClients;

/**
 * The official OpenAI Python SDK ({@code openai} from PyPI, pinned in {@code src/test/python/requirements.txt}) against
 * this server: {@code src/test/python/openai_sdk/openai_e2e.py} (text completions, embeddings and responses on the
 * built-in model, the local embedding model and an upstream). Fails when the script fails.
 */
@QuarkusTest
class OpenAiPythonSdkTest {

    static OpenAiStub stub;

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    @BeforeAll
    static void upstream() {
        stub = new OpenAiStub();
    }

    @AfterAll
    static void stop() {
        stub.close();
    }

    @Test
    void officialSdkWorksUnchanged() throws Exception {
        Account user = fixtures.user("pysdk");
        PlatformEntity team = fixtures.team("pysdk-team", user);
        String upstream = Fixtures.unique("acme/echo");
        Inference.upstreamModel(upstream, stub, "echo", Map.of());
        String responder = Fixtures.unique("acme/responder");
        Inference.upstreamModel(responder, stub, "responder", Map.of());
        String output = PythonClients.run("openai_sdk/openai_e2e.py", Duration.ofMinutes(3),
                Map.of("BASE_URL", base.resolve("/v1").toString(), "API_KEY", user.key(), "PROJECT", team.name + "/sdk",
                        "BUILTIN_MODEL", "fulcrum-tiny", "EMBEDDING_MODEL", "all-minilm-l6-v2", "UPSTREAM_MODEL",
                        upstream, "RESPONSES_MODEL", responder));
        assertTrue(output.contains("openai-python e2e: ok"), output);
    }
}

package dev.fulcrum.inference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.NodeScripts;

/**
 * The official OpenAI Node SDK ({@code openai} from npm, installed here with {@code npm ci}) against this server:
 * {@code src/test/node/openai-sdk/e2e.mjs} (chat, text completions, embeddings and responses). Fails when the script
 * fails.
 */
@QuarkusTest
class OpenAiNodeSdkTest {

    private static final Path SCRIPT_DIR = Path.of("src", "test", "node", "openai-sdk");

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
        Account user = fixtures.user("sdk");
        PlatformEntity team = fixtures.team("sdk-team", user);
        PlatformEntity other = fixtures.team("other-team", fixtures.user("other"));
        String model = Fixtures.unique("acme/echo");
        Inference.upstreamModel(model, stub, "echo", Map.of());
        String limited = Fixtures.unique("acme/limited");
        Inference.upstreamModel(limited, stub, "rate-limited", Map.of());
        String responder = Fixtures.unique("acme/responder");
        Inference.upstreamModel(responder, stub, "responder", Map.of());

        NodeScripts.run(SCRIPT_DIR, Duration.ofMinutes(5), Map.of(), "npm", "ci", "--no-audit", "--no-fund");
        String output = NodeScripts.run(SCRIPT_DIR, Duration.ofMinutes(2),
                Map.of("BASE_URL", base.resolve("/v1").toString(), "API_KEY", user.key(), "PROJECT", team.name + "/sdk",
                        "MODEL", model, "LIMITED_MODEL", limited, "BUILTIN_MODEL", "fulcrum-tiny", "OTHER_PROJECT",
                        other.name + "/p", "EMBEDDING_MODEL", "all-minilm-l6-v2", "RESPONSES_MODEL", responder),
                "node", "e2e.mjs");
        assertTrue(output.contains("openai-node e2e: ok"), output);

        // the SDK's `project` option (OpenAI-Project) counted the usage for the team's project
        await("the SDK's completions in the usage").atMost(Duration.ofSeconds(10))
                .until(() -> io.restassured.RestAssured.given().filter(Contract.INFERENCE).auth().oauth2(user.key())
                        .queryParam("entity", team.name).queryParam("project", "sdk").get("/api/v1/usage").then()
                        .statusCode(200).extract().jsonPath().getList("data").size() >= 2);
    }
}

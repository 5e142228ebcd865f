package dev.fulcrum.datasets;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.NodeScripts;
import dev.fulcrum.support.PythonClients;

/**
 * Both official Weave SDKs, unchanged, against one server: the Python SDK ({@code weave} from PyPI) publishes a dataset
 * ({@code src/test/python/weave_sdk/publish_for_typescript.py}), the TypeScript SDK ({@code weave} from npm) reads it
 * back as a viewer ({@code src/test/node/weave-sdk/read-python.mjs}): every row with its keys in the order Python
 * published them, and the same dataset, table and row digests as the v2 API answers.
 */
@QuarkusTest
class WeaveCrossSdkTest {

    private static final Path NODE_DIR = Path.of("src", "test", "node", "weave-sdk");

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URI base;

    private static JsonPath result(String output) {
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        return JsonPath.from(result.group(1));
    }

    @Test
    void theTypeScriptSdkReadsWhatThePythonSdkPublished() throws Exception {
        Account member = fixtures.user("weave-x");
        PlatformEntity team = fixtures.team("weave-x-lab", fixtures.user("weave-x-admin"));
        fixtures.member(team, member, Role.MEMBER);
        Account viewer = fixtures.user("weave-x-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        String project = team.name + "/both";
        String url = base.toString().replaceAll("/$", "");
        Path expected = Path.of("target", "py-clients", "published-for-typescript.json").toAbsolutePath();

        JsonPath published = result(PythonClients.run("weave_sdk/publish_for_typescript.py", Duration.ofMinutes(5),
                Map.of("WF_TRACE_SERVER_URL", url, "WANDB_BASE_URL", url, "WANDB_API_KEY", member.key(), "PROJECT",
                        project, "EXPECTED", expected.toString(), "WEAVE_USE_SERVER_CACHE", "false",
                        "WEAVE_DISABLE_ANALYTICS", "true", "WANDB_DIR",
                        Path.of("target", "py-clients").toAbsolutePath().toString())));

        NodeScripts.run(NODE_DIR, Duration.ofMinutes(5), Map.of(), "npm", "ci", "--no-audit", "--no-fund");
        JsonPath read = result(NodeScripts.run(
                NODE_DIR, Duration.ofMinutes(3), Map.of("TRACE_URL", url, "API_KEY", viewer.key(), "PROJECT", project,
                        "URI", published.getString("uri"), "EXPECTED", expected.toString()),
                "node", "read-python.mjs"));

        // the digests the TypeScript SDK saw are the Python SDK's and the v2 API's
        assertEquals(published.getString("digest"), read.getString("digest"));
        JsonPath dataset = DatasetsClient.as(viewer.key())
                .get("/v2/" + project + "/datasets/from-python/versions/latest").then().statusCode(200)
                .body("digest", equalTo(published.getString("digest"))).body("version_index", equalTo(0)).extract()
                .jsonPath();
        assertEquals("weave:///" + project + "/table/" + read.getString("table"), dataset.getString("rows"));
        String lines = DatasetsClient.as(viewer.key())
                .get("/v2/" + project + "/tables/" + read.getString("table") + "/rows").then().statusCode(200).extract()
                .asString();
        List<String> rowDigests = new ArrayList<>();
        for (String line : lines.split("\n")) {
            rowDigests.add(JsonPath.from(line).getString("digest"));
        }
        assertEquals(500, rowDigests.size());
        assertEquals(rowDigests, read.getList("rowDigests"));
    }
}

package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * HTTP clients for requests Fulcrum sends out are made by {@link dev.fulcrum.platform.http.OutboundHttp} alone, so that
 * their TLS, pooling and redirect settings are the same everywhere. The one exception is the S3 blob store, whose AWS
 * SDK brings its own transport (configured by the store's settings).
 */
class OutboundHttpOwnershipTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");

    static final Pattern CLIENT_SETUP = Pattern.compile(
            "\\bcreateHttpClient\\s*\\(|\\bnew\\s+HttpClientOptions\\s*\\(|\\bHttpClient\\.new(?:Builder|HttpClient)\\s*\\("
                    + "|\\bWebClient\\.create\\s*\\(|\\bopenConnection\\s*\\(");

    private static final List<String> ALLOWED = List.of("platform/http/OutboundHttp.java",
            "artifacts/S3BlobStore.java");

    @Test
    void onlyOutboundHttpMakesHttpClients() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                String name = SOURCES.relativize(source).toString();
                if (ALLOWED.contains(name)) {
                    continue;
                }
                Matcher setup = CLIENT_SETUP.matcher(Files.readString(source));
                while (setup.find()) {
                    found.add(name + ": " + setup.group());
                }
            }
        }
        assertEquals(List.of(), found, "make outbound HTTP clients through platform/OutboundHttp");
        assertTrue(CLIENT_SETUP.matcher(Files.readString(SOURCES.resolve(ALLOWED.get(0)))).find());
    }

    @Test
    void theRuleFindsAClientSetUp() {
        assertTrue(CLIENT_SETUP.matcher("client = vertx.createHttpClient(new HttpClientOptions())").find());
        assertTrue(CLIENT_SETUP.matcher("java.net.http.HttpClient.newHttpClient()").find());
        assertTrue(CLIENT_SETUP.matcher("HttpClient.newBuilder().build()").find());
        assertFalse(CLIENT_SETUP.matcher("client = http.client(timeout, pool, OutboundHttp.Spans.CALLER)").find());
    }
}

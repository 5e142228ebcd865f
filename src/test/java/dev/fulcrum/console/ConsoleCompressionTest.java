package dev.fulcrum.console;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.emptyString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.GZIPInputStream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.config.DecoderConfig;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The console compresses its own answers (pages, the JSON its scripts read, its stylesheet and scripts) with gzip when
 * the browser accepts it, and nothing else is compressed: the API's and the gateway's answers go as they are, whatever
 * the client accepts. The bodies are read raw (REST Assured decodes nothing) and unzipped here.
 */
@QuarkusTest
class ConsoleCompressionTest {

    @Inject
    Fixtures fixtures;

    /** A request whose answer is read as it was sent. */
    private static RequestSpecification raw(String acceptEncoding) {
        RequestSpecification request = given()
                .config(RestAssured.config().decoderConfig(DecoderConfig.decoderConfig().noContentDecoders()))
                .redirects().follow(false);
        return acceptEncoding == null ? request : request.header("Accept-Encoding", acceptEncoding);
    }

    private static String gunzip(byte[] bytes) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void pagesAreCompressedWhenTheBrowserAcceptsGzip() throws IOException {
        Response compressed = raw("gzip, deflate, br").get("/console/sign-in");
        compressed.then().statusCode(200).header("Content-Encoding", "gzip")
                .header("Vary", containsString("Accept-Encoding"))
                .header("Content-Security-Policy", containsString("default-src 'none'"));
        String page = gunzip(compressed.asByteArray());
        assertTrue(page.contains("<html"), page);

        Response plain = raw(null).get("/console/sign-in");
        plain.then().statusCode(200).header("Content-Encoding", nullValue()).header("Vary",
                containsString("Accept-Encoding"));
        assertEquals(page, plain.asString());
        assertTrue(compressed.asByteArray().length < plain.asByteArray().length);

        // refused by name, or only other codings accepted: sent as it is
        raw("gzip;q=0, *;q=1").get("/console/sign-in").then().statusCode(200).header("Content-Encoding", nullValue());
        raw("br").get("/console/sign-in").then().statusCode(200).header("Content-Encoding", nullValue());
        raw("*").get("/console/sign-in").then().statusCode(200).header("Content-Encoding", "gzip");
    }

    @Test
    void theJsonOfASignedInPageIsCompressed() throws IOException {
        Account owner = fixtures.user("gz");
        String cookie = given().contentType(ContentType.URLENC).formParam("api_key", owner.key()).redirects()
                .follow(false).post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
        // a run that is not there: the script's JSON error, compressed like any answer of the console
        Response missing = raw("gzip").cookie(ConsoleSessions.COOKIE, cookie)
                .get("/console/projects/" + owner.name() + "/none/runs/nothing/history.json?keys=loss");
        missing.then().statusCode(404).header("Content-Encoding", "gzip").contentType(ContentType.JSON);
        assertTrue(gunzip(missing.asByteArray()).contains("\"error\""));
    }

    @Test
    void assetsAreKeptCompressedAndRevalidated() throws IOException {
        Response plain = raw(null).get("/console/assets/console.css");
        plain.then().statusCode(200).contentType("text/css").header("Content-Encoding", nullValue())
                .header("Cache-Control", containsString("max-age")).header("Vary", containsString("Accept-Encoding"))
                .header("X-Content-Type-Options", "nosniff");
        Response compressed = raw("gzip").get("/console/assets/console.css");
        compressed.then().statusCode(200).contentType("text/css").header("Content-Encoding", "gzip");
        assertArrayEquals(plain.asByteArray(), gunzip(compressed.asByteArray()).getBytes(StandardCharsets.UTF_8));
        assertTrue(compressed.asByteArray().length < plain.asByteArray().length);

        // each representation has its own tag; asking again with it is a 304 without a body
        String plainTag = plain.header("ETag");
        String compressedTag = compressed.header("ETag");
        assertNotEquals(plainTag, compressedTag);
        raw(null).header("If-None-Match", plainTag).get("/console/assets/console.css").then().statusCode(304)
                .body(emptyString()).header("ETag", plainTag);
        raw("gzip").header("If-None-Match", "\"other\", W/" + compressedTag).get("/console/assets/console.css").then()
                .statusCode(304);
        raw("gzip").header("If-None-Match", plainTag).get("/console/assets/console.css").then().statusCode(200)
                .header("Content-Encoding", "gzip");

        raw("gzip").get("/console/assets/console.js").then().statusCode(200).contentType("text/javascript")
                .header("Content-Encoding", "gzip");
        raw("gzip").head("/console/assets/console.js").then().statusCode(200).header("Content-Encoding", "gzip")
                .body(emptyString());
        // the charts' library, from its web jar
        raw("gzip").get("/webjars/uplot/1.6.30/dist/uPlot.iife.min.js").then().statusCode(200)
                .contentType("text/javascript").header("Content-Encoding", "gzip");
        raw(null).get("/webjars/uplot/1.6.30/dist/uPlot.min.css").then().statusCode(200).contentType("text/css")
                .header("Content-Encoding", nullValue());
        raw("gzip").get("/console/assets/missing.js").then().statusCode(404);
        raw("gzip").get("/webjars/uplot/0.0.0/missing.js").then().statusCode(404);
        raw("gzip").get("/console/assets/..%2Fapplication.properties").then().statusCode(404);
    }

    @Test
    void pagesNameTheirAssetsByVersion() {
        // served for a day without revalidation, an asset is named by its content's tag, so that a page of an upgraded
        // server names the new file and the browser fetches it
        String page = raw(null).get("/console/sign-in").then().statusCode(200).extract().asString();
        for (String name : List.of("console.css", "console.js")) {
            String tag = raw(null).get("/console/assets/" + name).then().statusCode(200).extract().header("ETag");
            String url = "/console/assets/" + name + "?v=" + tag.replace("\"", "");
            assertTrue(page.contains("\"" + url + "\""), page);
            raw(null).get(url).then().statusCode(200).header("ETag", tag);
        }
    }

    @Test
    void theApiAndTheGatewayAreNeverCompressed() {
        Account caller = fixtures.user("gzapi");
        raw("gzip").auth().oauth2(caller.key()).get("/v1/models").then().statusCode(200).header("Content-Encoding",
                nullValue());
        raw("gzip").auth().oauth2(caller.key()).get("/api/v1/users/me").then().statusCode(equalTo(200))
                .header("Content-Encoding", nullValue());
        raw("gzip").auth().oauth2(caller.key()).get("/v1/health").then().statusCode(200).header("Content-Encoding",
                nullValue());
        raw("gzip").auth().oauth2(caller.key()).contentType(ContentType.JSON)
                .body("{\"model\": \"not-a-model\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}")
                .post("/v1/chat/completions").then().statusCode(404).header("Content-Encoding", nullValue());
    }

    @Test
    void acceptEncodingIsReadByItsQualities() {
        assertTrue(ConsoleCompression.acceptsGzip("gzip"));
        assertTrue(ConsoleCompression.acceptsGzip("deflate, GZIP;q=0.5"));
        assertTrue(ConsoleCompression.acceptsGzip("x-gzip"));
        assertTrue(ConsoleCompression.acceptsGzip("br;q=1, *;q=0.1"));
        assertFalse(ConsoleCompression.acceptsGzip(null));
        assertFalse(ConsoleCompression.acceptsGzip(""));
        assertFalse(ConsoleCompression.acceptsGzip("identity"));
        assertFalse(ConsoleCompression.acceptsGzip("gzip;q=0"));
        assertFalse(ConsoleCompression.acceptsGzip("gzip;q=0.0, *"));
        assertFalse(ConsoleCompression.acceptsGzip("*;q=0"));
        assertFalse(ConsoleCompression.acceptsGzip("gzip;q=nope"));
    }
}

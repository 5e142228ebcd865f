package dev.fulcrum.platform.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;

/**
 * Each interface answers errors in its own shape, as its document declares it ({@code x-error-shape} of its tags), and
 * not by the path's look.
 */
@QuarkusTest
class ErrorShapesTest extends LabTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private String collections() {
        return "/api/v1/entities/" + team.name + "/projects/vision/artifacts/collections";
    }

    @Test
    void aBodyTooLargeIsTheSameOpenAiErrorOnTheChatRouteAndTheJaxRsRoutes() throws IOException {
        JsonNode chat = tooLarge("/v1/chat/completions").path("error");
        JsonNode models = tooLarge("/v1/models").path("error");
        assertEquals("invalid_request_error", chat.path("type").asText());
        assertEquals("request_too_large", chat.path("code").asText());
        assertEquals(chat.path("type"), models.path("type"));
        assertEquals(chat.path("code"), models.path("code"));
        assertEquals(chat.path("param"), models.path("param"));
    }

    @Test
    void jsonSentToAnUploadIs415NamingMultipart() {
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("file", "x")).post(collections() + "/resnet/versions").then().statusCode(415)
                .contentType("application/problem+json").body("title", equalTo("Unsupported Media Type"))
                .body("detail", containsString("multipart/form-data"))
                .body("detail", not(containsString("application/json")));
    }

    @Test
    void aProblemsTitleIsTheReasonPhraseOfItsOwnStatus() throws IOException {
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "resnet", "type", "model")).post(collections()).then().statusCode(201);
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "resnet", "type", "model")).post(collections()).then().statusCode(409)
                .body("title", equalTo("Conflict")).body("status", equalTo(409));
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(collections() + "/nowhere").then()
                .statusCode(404).body("title", equalTo("Not Found")).body("status", equalTo(404));
        JsonNode tooLarge = tooLarge(collections());
        assertEquals(413, tooLarge.path("status").asInt());
        assertEquals("Content Too Large", tooLarge.path("title").asText());
    }

    @Test
    void theShapeIsTheInterfaces() {
        // the training API answers as FastAPI does
        given().get("/v1/preview/models").then().statusCode(401).body("$", hasKey("detail")).body("$",
                not(hasKey("error")));
        // the inference API as OpenAI does
        given().get("/v1/models").then().statusCode(401).body("error.type", equalTo("authentication_error"))
                .body("error.code", equalTo("invalid_api_key"));
        // the training workers' protocol, the model catalog and usage are the management API's: problem details
        for (String path : new String[] { "/api/v1/workers/w-1/claim", "/api/v1/admin/models", "/api/v1/usage" }) {
            (path.endsWith("claim") ? given().post(path) : given().get(path)).then().statusCode(401)
                    .contentType("application/problem+json").body("title", equalTo("Unauthorized"))
                    .body("status", equalTo(401));
        }
    }

    @Test
    void theDocumentsDeclareOneShapePerPath() throws IOException {
        List<String> published;
        try (Stream<java.nio.file.Path> files = Files.list(java.nio.file.Path.of("openapi"))) {
            published = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".yaml"))
                    .map(f -> f.substring(0, f.length() - ".yaml".length())).sorted().toList();
        }
        assertEquals(published, ErrorShapes.DOCUMENTS.stream().sorted().toList(), "every document is read");
        Map<String, List<ErrorShapes.Operation>> byPath = ErrorShapes.operations().stream()
                .collect(Collectors.groupingBy(ErrorShapes.Operation::template));
        assertTrue(byPath.size() > 80, "the documents' paths: " + byPath.size());
        byPath.forEach((path, operations) -> {
            assertEquals(1, operations.stream().map(ErrorShapes.Operation::dialect).distinct().count(), path);
            assertEquals(1, operations.stream().map(ErrorShapes.Operation::basic).distinct().count(), path);
        });
        ErrorShapes.Operation datasets = ErrorShapes.at("/v2/acme/vision/datasets");
        assertEquals(ErrorShapes.Dialect.DETAIL, datasets.dialect());
        assertTrue(datasets.basic());
        assertEquals(ErrorShapes.Dialect.OPENAI, ErrorShapes.at("/v1/chat/completions/").dialect());
        assertFalse(ErrorShapes.at("/v1/chat/completions").basic());
        assertEquals(ErrorShapes.Dialect.PROBLEM, ErrorShapes.at("/api/v1/workers/w-1/claim").dialect());
        assertEquals(ErrorShapes.Dialect.DETAIL, ErrorShapes.at("/v1/preview/models").dialect());
        assertNull(ErrorShapes.at("/v1/nowhere"));
        assertEquals(List.of("multipart/form-data"),
                ErrorShapes.consumes("POST", "/api/v1/entities/acme/projects/vision/artifacts/collections/c/versions"));
    }

    @Test
    void aPathNoInterfaceHasTakesTheShapeOfThePathsItExtends() {
        given().get("/v2/nowhere").then().statusCode(404).body("detail", equalTo("Not Found"));
        given().get("/v1/nowhere").then().statusCode(404).body("error.type", equalTo("not_found_error"));
        given().get("/api/v1/nowhere").then().statusCode(404).contentType("application/problem+json").body("title",
                equalTo("Not Found"));
    }

    /**
     * The answer to a JSON request announcing a body one byte over the largest JSON body outside the datasets API (none
     * is sent: the limit is checked on the announced length).
     */
    private static JsonNode tooLarge(String path) throws IOException {
        try (Socket socket = new Socket("localhost", RestAssured.port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + (MAX_JSON_REQUEST_BYTES + 1) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            StringBuilder head = new StringBuilder();
            while (head.indexOf("\r\n\r\n") < 0) {
                head.append((char) in.readUnsignedByte());
            }
            assertEquals("HTTP/1.1 413", head.substring(0, 12), head.toString());
            Matcher length = Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
            assertEquals(true, length.find(), head.toString());
            byte[] body = new byte[Integer.parseInt(length.group(1))];
            in.readFully(body);
            return JSON.readTree(body);
        }
    }

    /** {@code fulcrum.max-json-request-bytes} as configured for the tests. */
    private static final long MAX_JSON_REQUEST_BYTES = ConfigProvider.getConfig()
            .getValue("fulcrum.max-json-request-bytes", Long.class);
}

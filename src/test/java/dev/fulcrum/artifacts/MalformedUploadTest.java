package dev.fulcrum.artifacts;

import static dev.fulcrum.artifacts.ArtifactsClient.as;
import static dev.fulcrum.artifacts.ArtifactsClient.collections;
import static dev.fulcrum.artifacts.ArtifactsClient.upload;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * A multipart upload that is not well formed is a 422 problem of the body and stores nothing: no version, no
 * collection, no project.
 */
@QuarkusTest
class MalformedUploadTest {

    private static final String PART = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhello\r\n";
    private static final String TYPE = "--b\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nmodel\r\n";

    @Inject
    Fixtures fixtures;

    private Account member;
    private String project;
    private String versions;

    @BeforeEach
    void project() {
        member = fixtures.user("uploader");
        project = Fixtures.unique("never");
        versions = collections(member.name(), project) + "/weights/versions";
    }

    private void refused(String body) {
        refused(body.getBytes(StandardCharsets.UTF_8), "multipart/form-data; boundary=b");
    }

    private void refused(byte[] body, String contentType) {
        as(member).contentType(contentType).body(body).post(versions).then().statusCode(422)
                .contentType("application/problem+json").body("status", equalTo(422))
                .body("errors[0].field", notNullValue());
        given().filter(Contract.ACCOUNTS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + member.name() + "/projects/" + project).then().statusCode(404);
    }

    @Test
    void aBodyWithoutItsClosingBoundaryStoresNothing() {
        refused(TYPE + PART);
        refused(TYPE + PART.substring(0, PART.length() - 4));
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n");
    }

    @Test
    void aWrongBoundaryGarbageOrNothingStoresNothing() {
        refused(TYPE.replace("--b", "--other") + PART.replace("--b", "--other") + "--other--\r\n");
        refused("\u0001\u00ff garbage \r\n\r\n--\r\n--b");
        refused(new byte[0], "multipart/form-data; boundary=b");
        refused(TYPE + PART + "--b--\r\n", "multipart/form-data");
    }

    private void refused(String body, String contentType) {
        refused(body.getBytes(StandardCharsets.UTF_8), contentType);
    }

    @Test
    void aMalformedPartHeaderStoresNothing() {
        refused(TYPE + "--b\r\nContent-Disposition form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nx\r\n--b--\r\n");
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\r\nb.txt\"\r\n\r\nx\r\n"
                + "--b--\r\n");
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\rb.txt\"\r\n\r\nx\r\n"
                + "--b--\r\n");
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\u0000b.txt\"\r\n\r\nx\r\n"
                + "--b--\r\n");
    }

    @Test
    void aNulInATextFieldIsRefusedNamingTheField() {
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nd\u0000\r\n" + PART
                + "--b--\r\n");
        refused(TYPE + "--b\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"k\": \"v\\u0000\"}\r\n"
                + PART + "--b--\r\n");
        as(member).contentType("multipart/form-data; boundary=b")
                .body((TYPE
                        + "--b\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"k\": [\"\\u0000\"]}\r\n"
                        + PART + "--b--\r\n").getBytes(StandardCharsets.UTF_8))
                .post(versions).then().statusCode(422).body("errors[0].field", equalTo("metadata.k[0]"));
    }

    @Test
    void theSameUploadWellFormedIsStored() {
        as(member).contentType("multipart/form-data; boundary=b")
                .body((TYPE + PART + "--b--\r\n").getBytes(StandardCharsets.UTF_8)).post(versions).then()
                .statusCode(201).body("files.path", equalTo(List.of("a.txt")));
        upload(member, versions.substring(0, versions.length() - "/versions".length()), Map.of("b.txt", "b"), null,
                null).then().statusCode(201);
    }
}

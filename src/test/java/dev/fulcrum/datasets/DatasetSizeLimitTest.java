package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.create;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.SmallLimits;

/** JSON bodies are bounded before they are read: by their declared length, and chunked ones not at all accepted. */
@QuarkusTest
@TestProfile(SmallLimits.class)
class DatasetSizeLimitTest {

    @TestHTTPResource("/")
    URL base;

    @Test
    void aBodyOverTheLimitIs413AndStoresNothing() {
        create(EmbeddedPostgresResource.ADMIN_KEY, "admin/limits", "huge", rows(500, "too big")).then().statusCode(413)
                .body("detail", containsString("4096"));
        create(EmbeddedPostgresResource.ADMIN_KEY, "admin/limits", "small", rows(2, "fits")).then().statusCode(200);
        as(EmbeddedPostgresResource.ADMIN_KEY).get("/v2/admin/limits/datasets/huge/versions/latest").then()
                .statusCode(404);
    }

    @Test
    void otherInterfacesHaveTheirOwnJsonLimitInTheirOwnShape() {
        given().filter(Contract.ACCOUNTS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .contentType(ContentType.JSON).body(Map.of("name", "x".repeat(3000))).post("/api/v1/teams").then()
                .statusCode(413).contentType("application/problem+json").body("detail", containsString("2048"));
    }

    @Test
    void aChunkedJsonBodyIsRefusedUnread() throws Exception {
        byte[] body = "{\"rows\": [{\"a\": 1}]}".getBytes(StandardCharsets.UTF_8);
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "v2/admin/limits/datasets"))
                .header("Authorization", "Bearer " + EmbeddedPostgresResource.ADMIN_KEY)
                .header("Content-Type", "application/json")
                // a publisher of unknown length makes the client send the body chunked
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))).build();
        HttpResponse<String> response = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                .send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(413, response.statusCode());
        assertTrue(response.body().contains("Content-Length"), response.body());
    }
}

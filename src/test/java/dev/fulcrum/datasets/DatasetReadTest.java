package dev.fulcrum.datasets;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;

@QuarkusTest
class DatasetReadTest {

    @Test
    void createThenReadTheVersionByDigestLatestAndIndex() {
        Map<String, Object> body = Map.of("name", "Math QA", "rows",
                List.of(Map.of("question", "What is 2+2?", "answer", "4")));
        String digest = given().filter(Contract.DATASETS).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .contentType(ContentType.JSON).body(body).when().post("/v2/admin/qa/datasets").then().statusCode(200)
                .body("object_id", equalTo("math_qa")).body("version_index", equalTo(0)).extract().path("digest");

        for (String selector : List.of(digest, "latest", "v0")) {
            given().filter(Contract.DATASETS).auth().preemptive().basic("api", EmbeddedPostgresResource.ADMIN_KEY)
                    .when().get("/v2/admin/qa/datasets/math_qa/versions/" + selector).then().statusCode(200)
                    .body("digest", equalTo(digest)).body("name", equalTo("Math QA"))
                    .body("rows", startsWith("weave:///admin/qa/table/"));
        }
    }
}

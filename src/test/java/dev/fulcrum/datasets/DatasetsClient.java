package dev.fulcrum.datasets;

import static io.restassured.RestAssured.given;

import java.util.List;
import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;

/** The datasets API as a test client sees it; every response is checked against openapi/datasets.yaml. */
final class DatasetsClient {

    private DatasetsClient() {
    }

    static RequestSpecification as(String key) {
        return given().filter(Contract.DATASETS).auth().oauth2(key);
    }

    static RequestSpecification asBasic(String key) {
        return given().filter(Contract.DATASETS).auth().preemptive().basic("api", key);
    }

    static Response create(String key, String entityProject, String name, List<Map<String, Object>> rows) {
        Map<String, Object> body = name == null ? Map.of("rows", rows) : Map.of("name", name, "rows", rows);
        return as(key).contentType(ContentType.JSON).body(body).post("/v2/" + entityProject + "/datasets");
    }

    static List<Map<String, Object>> rows(int count, String prefix) {
        return java.util.stream.IntStream.range(0, count)
                .mapToObj(i -> Map.<String, Object> of("question", prefix + " question " + i, "answer", i)).toList();
    }
}

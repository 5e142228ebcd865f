package dev.fulcrum.datasets;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.Fixtures.Lab;

/** Weave's files and table updates and queries over HTTP: who may read and write, sorting, paging, errors. */
@QuarkusTest
class WeaveFilesAndTablesApiTest {

    @Inject
    Fixtures fixtures;

    private static RequestSpecification json(Account account) {
        return DatasetsClient.as(account.key()).contentType(ContentType.JSON);
    }

    @Test
    void filesAndTableUpdates() {
        Lab lab = fixtures.lab("tables");
        String digest = DatasetsClient.as(lab.member().key()).multiPart("project_id", lab.project())
                .multiPart("file", "obj.py", "print(1)\n".getBytes(), "text/x-python").post("/file/create").then()
                .statusCode(200).extract().jsonPath().getString("digest");
        assertEquals(Digests.ofBytes("print(1)\n".getBytes()), digest);
        assertEquals("print(1)\n", json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", digest))
                .post("/file/content").then().statusCode(200).extract().asString());
        DatasetsClient.as(lab.viewer().key()).multiPart("project_id", lab.project())
                .multiPart("file", "obj.py", "x".getBytes(), "text/x-python").post("/file/create").then()
                .statusCode(403);

        String base = json(lab.member())
                .body(Map.of("table",
                        Map.of("project_id", lab.project(), "rows", List.of(Map.of("b", 1), Map.of("b", 2)))))
                .post("/table/create").then().statusCode(200).extract().jsonPath().getString("digest");
        String updated = json(lab.member())
                .body(Map.of("project_id", lab.project(), "base_digest", base, "updates",
                        List.of(Map.of("append", Map.of("row", Map.of("b", 3))),
                                Map.of("insert", Map.of("index", 0, "row", Map.of("b", 0))),
                                Map.of("pop", Map.of("index", 1)))))
                .post("/table/update").then().statusCode(200).body("updated_row_digests.size()", equalTo(2)).extract()
                .jsonPath().getString("digest");
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", updated)).post("/table/query").then()
                .statusCode(200).body("rows.val.b", equalTo(List.of(0, 2, 3)));
        // an appended or inserted row is kept as JSON text like the rows of /table/create: it may hold a NUL
        String withNul = json(lab.member())
                .body(Map.of("project_id", lab.project(), "base_digest", base, "updates",
                        List.of(Map.of("append", Map.of("row", Map.of("b\u0000", "\u0000"))),
                                Map.of("insert", Map.of("index", 0, "row", Map.of("c", "x\u0000"))))))
                .post("/table/update").then().statusCode(200).extract().jsonPath().getString("digest");
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", withNul)).post("/table/query").then()
                .statusCode(200).body("rows[0].val.c", equalTo("x\u0000"))
                .body("rows[3].val", equalTo(Map.of("b\u0000", "\u0000")));
        json(lab.member())
                .body(Map.of("project_id", lab.project(), "base_digest", base, "updates",
                        List.of(Map.of("pop", Map.of("index", 5)))))
                .post("/table/update").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "updates", 0, "pop", "index")));
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "base_digest", base, "updates",
                List.of(Map.of("pop", Map.of("index", 0))))).post("/table/update").then().statusCode(403);
    }

    @Test
    void tableQuerySortsFiltersAndPages() {
        Lab lab = fixtures.lab("tables");
        List<Map<String, Object>> rows = List.of(Map.of("id", 2, "nested", Map.of("name", "b")),
                Map.of("id", 10, "nested", Map.of("name", "a")), Map.of("id", 1, "nested", Map.of("name", "c")),
                Map.of("id", 3));
        var created = json(lab.member()).body(Map.of("table", Map.of("project_id", lab.project(), "rows", rows)))
                .post("/table/create").then().statusCode(200).extract().jsonPath();
        String digest = created.getString("digest");
        List<String> rowDigests = created.getList("row_digests");
        // numbers by value (10 after 3), not as text; original_index keeps each row's place in the table
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                        List.of(Map.of("field", "id", "direction", "desc"))))
                .post("/table/query").then().statusCode(200).body("rows.val.id", equalTo(List.of(10, 3, 2, 1)))
                .body("rows.original_index", equalTo(List.of(1, 3, 0, 2)));
        // a nested key path; the row without it comes last ascending; offset and limit page the sorted rows
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                        List.of(Map.of("field", "nested.name", "direction", "asc")), "offset", 1, "limit", 2))
                .post("/table/query").then().statusCode(200).body("rows.val.id", equalTo(List.of(2, 1)));
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                        List.of(Map.of("field", "nested.name", "direction", "asc")), "offset", 3))
                .post("/table/query").then().statusCode(200).body("rows.val.id", equalTo(List.of(3)))
                .body("rows[0].digest", equalTo(rowDigests.get(3)));
        // row_digests narrow the table, in its order, before offset
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "digest", digest, "filter",
                        Map.of("row_digests", List.of(rowDigests.get(2), rowDigests.get(0))), "offset", 1))
                .post("/table/query").then().statusCode(200).body("rows.val.id", equalTo(List.of(1)));
        // an offset past the end is an empty page; a negative offset, an empty key path or an unknown direction a 422
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", digest, "offset", 4)).post("/table/query")
                .then().statusCode(200).body("rows.size()", equalTo(0));
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", digest, "offset", -1))
                .post("/table/query").then().statusCode(422).body("detail[0].loc", equalTo(List.of("body", "offset")));
        json(lab.viewer())
                .body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                        List.of(Map.of("field", "nested.", "direction", "asc"))))
                .post("/table/query").then().statusCode(422)
                .body("detail[0].loc", equalTo(List.of("body", "sort_by", 0, "field")));
        json(lab.viewer()).body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                List.of(Map.of("field", "id", "direction", "up")))).post("/table/query").then().statusCode(422);
        json(lab.outsider())
                .body(Map.of("project_id", lab.project(), "digest", digest, "sort_by",
                        List.of(Map.of("field", "id", "direction", "asc"))))
                .post("/table/query").then().statusCode(403);
    }

}

package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.asBasic;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Weave's object and table API ({@code /table/create}, {@code /obj/create}, {@code /obj/read}, {@code /objs/query},
 * {@code /obj/delete}) as the Weave SDK calls them: one store with the v2 datasets API.
 */
@QuarkusTest
class WeaveObjectApiTest {

    @Inject
    Fixtures fixtures;

    private Account member;
    private Account viewer;
    private Account outsider;
    private Account otherAdmin;
    private Account otherViewer;
    private String project;
    private String otherProject;

    @BeforeEach
    void team() {
        Account admin = fixtures.user("weave-admin");
        PlatformEntity team = fixtures.team("weave-lab", admin);
        member = fixtures.user("weave-member");
        viewer = fixtures.user("weave-viewer");
        outsider = fixtures.user("weave-outsider");
        fixtures.member(team, member, Role.MEMBER);
        fixtures.member(team, viewer, Role.VIEWER);
        project = team.name + "/proj";
        otherAdmin = fixtures.user("weave-other-admin");
        PlatformEntity otherTeam = fixtures.team("weave-other-lab", otherAdmin);
        otherViewer = fixtures.user("weave-other-viewer");
        fixtures.member(otherTeam, otherViewer, Role.VIEWER);
        otherProject = otherTeam.name + "/proj";
    }

    private static Response post(Account caller, String path, Object body) {
        return asBasic(caller.key()).contentType(ContentType.JSON).body(body).post(path);
    }

    private String createTable(Account caller, List<?> rows) {
        return post(caller, "/table/create", Map.of("table", Map.of("project_id", project, "rows", rows))).then()
                .statusCode(200).extract().path("digest");
    }

    private static Map<String, Object> dataset(String name, String rowsRef) {
        Map<String, Object> val = new LinkedHashMap<>();
        val.put("_type", "Dataset");
        val.put("_class_name", "Dataset");
        val.put("_bases", List.of("Object", "BaseModel"));
        val.put("name", name);
        val.put("rows", rowsRef);
        return val;
    }

    private Response createObject(Account caller, String objectId, Object val) {
        return createObject(caller, project, objectId, val);
    }

    private static Response createObject(Account caller, String project, String objectId, Object val) {
        Map<String, Object> obj = new LinkedHashMap<>();
        obj.put("project_id", project);
        obj.put("object_id", objectId);
        obj.put("val", val);
        return post(caller, "/obj/create", Map.of("obj", obj));
    }

    @Test
    void tableCreateKeepsWeaveDigests() {
        post(member, "/table/create",
                Map.of("table",
                        Map.of("project_id", project, "rows",
                                List.of(Map.of("question", "What is 2+2?", "answer", "4"))))).then().statusCode(200)
                                        .body("row_digests", contains("xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ"))
                                        .body("digest", equalTo(Digests
                                                .ofTable(List.of("xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ"))));
    }

    @Test
    void aPublishedDatasetIsTheV2Dataset() {
        List<Map<String, Object>> rows = List.of(Map.of("question", "What is 2+2?", "answer", "4"),
                Map.of("q", "ünïcødé ✓", "n", 1.5, "nested", Map.of("a", List.of(1, 2, 3))));
        String table = createTable(member, rows);
        post(member, "/table/query", Map.of("project_id", project, "digest", table)).then().statusCode(200)
                .body("rows", hasSize(2)).body("rows[1].val.q", equalTo("ünïcødé ✓"))
                .body("rows[0].digest", equalTo("xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ"));

        String ref = "weave:///" + project + "/table/" + table;
        Response created = createObject(member, "qa", dataset("qa", ref));
        created.then().statusCode(200).body("object_id", equalTo("qa")).body("version_index", equalTo(0));
        String digest = created.path("digest");

        // the same content: the same digest and version; new content: the next version
        createObject(member, "qa", dataset("qa", ref)).then().statusCode(200).body("digest", equalTo(digest))
                .body("version_index", equalTo(0));
        Map<String, Object> described = dataset("qa", ref);
        described.put("description", "second");
        createObject(member, "qa", described).then().statusCode(200).body("version_index", equalTo(1)).body("digest",
                not(equalTo(digest)));

        // the v2 door reads the same record
        DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/qa/versions/" + digest).then().statusCode(200)
                .body("digest", equalTo(digest)).body("version_index", equalTo(0)).body("rows", equalTo(ref))
                .body("name", equalTo("qa"));

        // and /obj/read gives the val as sent
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "qa", "digest", digest)).then()
                .statusCode(200).body("obj.digest", equalTo(digest)).body("obj.version_index", equalTo(0))
                .body("obj.is_latest", equalTo(0)).body("obj.kind", equalTo("object"))
                .body("obj.base_object_class", equalTo("Dataset")).body("obj.val.rows", equalTo(ref))
                .body("obj.val._bases", contains("Object", "BaseModel")).body("obj.project_id", equalTo(project));
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "qa", "digest", "latest")).then()
                .statusCode(200).body("obj.version_index", equalTo(1)).body("obj.is_latest", equalTo(1))
                .body("obj.val.description", equalTo("second"));
    }

    @Test
    void tableStatsCountTheRowsForPagingThroughTableQuery() {
        Response created = DatasetsClient.create(member.key(), project, "Paged", DatasetsClient.rows(120, "p"));
        created.then().statusCode(200);
        String rowsRef = DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/paged/versions/latest")
                .then().statusCode(200).extract().path("rows");
        String table = rowsRef.substring(rowsRef.lastIndexOf('/') + 1);

        post(viewer, "/table/query_stats", Map.of("project_id", project, "digest", table)).then().statusCode(200)
                .body("count", equalTo(120));
        post(viewer, "/table/query", Map.of("project_id", project, "digest", table, "limit", 50, "offset", 100)).then()
                .statusCode(200).body("rows", hasSize(20)).body("rows[0].original_index", equalTo(100));

        post(outsider, "/table/query_stats", Map.of("project_id", project, "digest", table)).then().statusCode(403);
        post(viewer, "/table/query_stats", Map.of("project_id", project, "digest", "0".repeat(64))).then()
                .statusCode(404);
        post(viewer, "/table/query_stats", Map.of("project_id", project, "digest", "not-a-digest")).then()
                .statusCode(422).body("detail[0].loc", contains("body", "digest"));
        post(viewer, "/table/query_stats", Map.of("project_id", "no-slash", "digest", table)).then().statusCode(422)
                .body("detail[0].loc", contains("body", "project_id"));
        DatasetsClient.as(viewer.key()).contentType(ContentType.JSON).body(Map.of("digest", table))
                .post("/table/query_stats").then().statusCode(422);
    }

    @Test
    void aV2DatasetIsReadableAsAnObject() {
        Response created = DatasetsClient.create(member.key(), project, "From v2", DatasetsClient.rows(3, "v2"));
        created.then().statusCode(200);
        String digest = created.path("digest");
        Response read = post(viewer, "/obj/read",
                Map.of("project_id", project, "object_id", "from_v2", "digest", digest));
        read.then().statusCode(200).body("obj.val._type", equalTo("Dataset")).body("obj.val.name", equalTo("From v2"))
                .body("obj.val.description", nullValue()).body("obj.base_object_class", equalTo("Dataset"));
        // its val is the object its digest is computed from
        Map<String, Object> val = read.path("obj.val");
        String again = createObject(member, "from_v2", val).then().statusCode(200).extract().path("digest");
        assertEquals(digest, again);
        String rowsRef = read.path("obj.val.rows");
        post(viewer, "/table/query",
                Map.of("project_id", project, "digest", rowsRef.substring(rowsRef.lastIndexOf('/') + 1))).then()
                        .statusCode(200).body("rows", hasSize(3));
    }

    @Test
    void anyKindOfObjectIsStoredAndListed() {
        Map<String, Object> prompt = new LinkedHashMap<>();
        prompt.put("_type", "StringPrompt");
        prompt.put("_class_name", "StringPrompt");
        prompt.put("_bases", List.of("Prompt", "Object", "BaseModel"));
        prompt.put("name", "greeting");
        prompt.put("content", "Hello {name}");
        String digest = createObject(member, "greeting", prompt).then().statusCode(200)
                .body("version_index", equalTo(0)).extract().path("digest");
        prompt.put("content", "Hi {name}");
        createObject(member, "greeting", prompt).then().statusCode(200).body("version_index", equalTo(1));
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "greeting", "digest", digest)).then()
                .statusCode(200).body("obj.val.content", equalTo("Hello {name}"))
                .body("obj.base_object_class", equalTo("Prompt"));
        createObject(member, "model", Map.of("_type", "Model", "_class_name", "Model", "_bases",
                List.of("Object", "BaseModel"), "temperature", 0.5)).then().statusCode(200);

        // a prompt is not a dataset
        DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/greeting/versions/latest").then()
                .statusCode(404);

        post(viewer, "/objs/query", Map.of("project_id", project)).then().statusCode(200).body("objs", hasSize(3))
                .body("objs.object_id", contains("greeting", "greeting", "model"));
        post(viewer, "/objs/query", Map.of("project_id", project, "filter", Map.of("latest_only", true))).then()
                .statusCode(200).body("objs.version_index", contains(1, 0)).body("objs.is_latest", contains(1, 1));
        post(viewer, "/objs/query",
                Map.of("project_id", project, "filter", Map.of("object_ids", List.of("model")), "limit", 1)).then()
                        .statusCode(200).body("objs.object_id", contains("model"))
                        .body("objs[0].val.temperature", equalTo(0.5f));
        post(viewer, "/objs/query", Map.of("project_id", project, "limit", 2, "offset", 2)).then().statusCode(200)
                .body("objs.object_id", contains("model"));

        // delete one version, then the object
        post(member, "/obj/delete", Map.of("project_id", project, "object_id", "greeting", "digests", List.of(digest)))
                .then().statusCode(200).body("num_deleted", equalTo(1));
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "greeting", "digest", digest)).then()
                .statusCode(404).body("detail", containsString("not found"));
        post(member, "/obj/delete", Map.of("project_id", project, "object_id", "greeting")).then().statusCode(200)
                .body("num_deleted", equalTo(1));
        post(member, "/obj/delete", Map.of("project_id", project, "object_id", "greeting")).then().statusCode(404);
    }

    @Test
    void tableReferencesMustNameTablesOfTheProject() {
        String table = createTable(member, List.of(Map.of("a", 1)));
        createObject(member, "qa", dataset("qa", "weave:///other/proj/table/" + table)).then().statusCode(422)
                .body("detail[0].loc", contains("body", "obj", "val", "rows"))
                .body("detail[0].msg", containsString("another project"));
        String unknown = "0".repeat(64);
        createObject(member, "qa", dataset("qa", "weave:///" + project + "/table/" + unknown)).then().statusCode(422)
                .body("detail[0].loc", contains("body", "obj", "val", "rows"))
                .body("detail[0].msg", containsString("not found"));
        createObject(member, "scorer",
                Map.of("_type", "Scorer", "tables", List.of("weave:///" + project + "/table/" + unknown))).then()
                        .statusCode(422).body("detail[0].loc", contains("body", "obj", "val", "tables", 0));
        createObject(member, "qa", dataset("qa", "not a ref")).then().statusCode(422).body("detail[0].loc",
                contains("body", "obj", "val", "rows"));
    }

    @Test
    void invalidRequestsAreNamed() {
        post(member, "/obj/create", Map.of("obj", Map.of("project_id", "no-slash", "object_id", "x", "val", Map.of())))
                .then().statusCode(422).body("detail[0].loc", contains("body", "obj", "project_id"));
        post(member, "/obj/create",
                Map.of("obj", Map.of("project_id", project, "object_id", "bad id!", "val", Map.of()))).then()
                        .statusCode(422).body("detail[0].loc", contains("body", "obj", "object_id"));
        post(member, "/obj/create", Map.of("obj", Map.of("project_id", project, "object_id", "x"))).then()
                .statusCode(422).body("detail[0].loc", contains("body", "obj", "val"));
        post(member, "/table/create", Map.of("table", Map.of("project_id", project, "rows", List.of(1)))).then()
                .statusCode(422).body("detail[0].loc", contains("body", "table", "rows", 0));
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "x", "digest", "nope")).then()
                .statusCode(422).body("detail[0].loc", contains("body", "digest"));
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "missing", "digest", "latest")).then()
                .statusCode(404).body("detail", containsString("Project " + project + " not found"));
        createTable(member, List.of());
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "missing", "digest", "latest")).then()
                .statusCode(404).body("detail", containsString(project + "/missing:latest not found"));
        post(viewer, "/objs/query", Map.of("project_id", project, "limit", -1)).then().statusCode(422);
        // a fraction is no count (Jackson would read 1.5 as 1), like a string or a boolean
        for (Object limit : List.of(1.5, "1", true)) {
            post(viewer, "/objs/query", Map.of("project_id", project, "limit", limit)).then().statusCode(422)
                    .body("detail[0].loc", contains("body", "limit"));
        }
        post(viewer, "/objs/query", "{\"project_id\": \"" + project + "\", \"limit\": 2.0}").then().statusCode(200);
        // "." and ".." name no path segment: refused as object ids
        for (String objectId : List.of(".", "..")) {
            post(member, "/obj/create",
                    Map.of("obj",
                            Map.of("project_id", project, "object_id", objectId, "val", Map.of("_type", "Dataset"))))
                                    .then().statusCode(422);
        }
    }

    @Test
    void viewersReadMembersWriteOutsidersAreRefused() {
        String table = createTable(member, List.of(Map.of("a", 1)));
        String ref = "weave:///" + project + "/table/" + table;
        post(viewer, "/table/create", Map.of("table", Map.of("project_id", project, "rows", List.of(Map.of("a", 2)))))
                .then().statusCode(403).body("detail", containsString("member"));
        createObject(viewer, "qa", dataset("qa", ref)).then().statusCode(403);
        String digest = createObject(member, "qa", dataset("qa", ref)).then().statusCode(200).extract().path("digest");
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "qa", "digest", digest)).then()
                .statusCode(200);
        post(viewer, "/obj/delete", Map.of("project_id", project, "object_id", "qa")).then().statusCode(403);
        post(outsider, "/obj/read", Map.of("project_id", project, "object_id", "qa", "digest", digest)).then()
                .statusCode(403);
        post(outsider, "/objs/query", Map.of("project_id", project)).then().statusCode(403);
        post(outsider, "/table/query", Map.of("project_id", project, "digest", table)).then().statusCode(403);
        DatasetsClient.asBasic("not-a-key").contentType(ContentType.JSON)
                .body(Map.of("project_id", project, "object_id", "qa", "digest", digest)).post("/obj/read").then()
                .statusCode(401);
    }

    @Test
    void anyJsonValueIsAnObjectWithWeavesDigest() {
        // the digests of Python's json.dumps(val, sort_keys=True), as the SDK computes them
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("wFJgmJlOE45XK99yLrnR30dY0EY6soEoNhJYMPdn2OA", List.of(1, "two"));
        values.put("Hh0PJR06dvorGYyBFkB4VyYjQDiH2wKYi1BLBJLp8HY", "text");
        values.put("ihmbEgz0ANacMA4d1urNyLAAI1PjBEu6sh4BJbMsn9Y", 3.5);
        values.put("dCNOmKYnSYX12vHzasLXiswzlGT5UHA7jAGYkvmCuQs", null);
        int index = 0;
        for (Map.Entry<String, Object> value : values.entrySet()) {
            createObject(member, "value", value.getValue()).then().statusCode(200)
                    .body("digest", equalTo(value.getKey())).body("version_index", equalTo(index++));
            Object expected = value.getValue() instanceof Double d ? (Object) d.floatValue() : value.getValue();
            post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "value", "digest", value.getKey()))
                    .then().statusCode(200).body("obj.val", equalTo(expected)).body("obj.kind", equalTo("object"))
                    .body("obj.base_object_class", nullValue());
        }
        // a table published alone is its ref: it must name a table of the project, as inside an object
        String table = createTable(member, List.of(Map.of("a", 1)));
        createObject(member, "bare-table", "weave:///" + project + "/table/" + table).then().statusCode(200);
        post(viewer, "/obj/read", Map.of("project_id", project, "object_id", "bare-table", "digest", "latest")).then()
                .statusCode(200).body("obj.val", equalTo("weave:///" + project + "/table/" + table));
        createObject(member, "bare-table", "weave:///" + project + "/table/" + "0".repeat(64)).then().statusCode(422)
                .body("detail[0].loc", contains("body", "obj", "val"));
        createObject(member, "held", List.of(Map.of("rows", "weave:///" + otherProject + "/table/" + table))).then()
                .statusCode(422).body("detail[0].loc", contains("body", "obj", "val", 0, "rows"));
        // a list is no dataset
        DatasetsClient.as(viewer.key()).get("/v2/" + project + "/datasets/value/versions/latest").then()
                .statusCode(404);
        createObject(viewer, "value", List.of(1)).then().statusCode(403);
    }

    @Test
    void refsReadAPathIntoObjectsAndTheirTables() {
        String table = createTable(member, List.of(Map.of("q", "one"), Map.of("q", "two")));
        String rowDigest = post(viewer, "/table/query", Map.of("project_id", project, "digest", table)).then()
                .statusCode(200).extract().path("rows[1].digest");
        String datasetDigest = createObject(member, "qa", dataset("qa", "weave:///" + project + "/table/" + table))
                .then().statusCode(200).extract().path("digest");
        Map<String, Object> model = new LinkedHashMap<>();
        model.put("_type", "Model");
        model.put("dataset", "weave:///" + project + "/object/qa:" + datasetDigest);
        model.put("params", Map.of("a/b", List.of(10, 20)));
        String modelDigest = createObject(member, "m", model).then().statusCode(200).extract().path("digest");
        String base = "weave:///" + project + "/object/";

        post(viewer, "/refs/read_batch",
                Map.of("refs",
                        List.of(base + "m:" + modelDigest, base + "m:latest/attr/params/key/a%2Fb/index/1",
                                base + "m:v0/attr/dataset/attr/rows/id/" + rowDigest,
                                base + "qa:" + datasetDigest + "/attr/name"))).then().statusCode(200)
                                        .body("vals", hasSize(4)).body("vals[0]._type", equalTo("Model"))
                                        .body("vals[1]", equalTo(20)).body("vals[2].q", equalTo("two"))
                                        .body("vals[3]", equalTo("qa"));
        post(viewer, "/refs/read_batch", Map.of("refs", List.of())).then().statusCode(200).body("vals", hasSize(0));

        // a ref to nothing is a 404 naming it
        for (String nothing : List.of(base + "m:latest/attr/nope", base + "m:latest/index/0",
                base + "m:latest/attr/params/key/a%2Fb/index/2", base + "missing:latest",
                base + "m:latest/attr/dataset/attr/rows/id/" + "x".repeat(43), base + "m:latest/attr/params/key/%zz")) {
            post(viewer, "/refs/read_batch", Map.of("refs", List.of(nothing))).then().statusCode(404).body("detail",
                    not(equalTo("")));
        }
        // what is not a ref is a 422 at it
        post(viewer, "/refs/read_batch",
                Map.of("refs", List.of(base + "m:latest", "weave:///" + project + "/table/" + table))).then()
                        .statusCode(422).body("detail[0].loc", contains("body", "refs", 1));

        // who may read: neither an outsider nor a viewer of another team; nor, through a ref in a value, another
        // team's object
        for (Account refused : List.of(outsider, otherViewer)) {
            post(refused, "/refs/read_batch", Map.of("refs", List.of(base + "m:latest"))).then().statusCode(403);
        }
        String foreign = createObject(otherAdmin, otherProject, "secret", Map.of("k", "v")).then().statusCode(200)
                .extract().path("digest");
        createObject(member, "pointer", Map.of("to", "weave:///" + otherProject + "/object/secret:" + foreign)).then()
                .statusCode(200);
        post(viewer, "/refs/read_batch", Map.of("refs", List.of(base + "pointer:latest/attr/to"))).then()
                .statusCode(200).body("vals[0]", equalTo("weave:///" + otherProject + "/object/secret:" + foreign));
        post(viewer, "/refs/read_batch", Map.of("refs", List.of(base + "pointer:latest/attr/to/attr/k"))).then()
                .statusCode(403);
        post(otherViewer, "/refs/read_batch", Map.of("refs", List.of(base + "pointer:latest/attr/to/attr/k"))).then()
                .statusCode(403);
    }

    @Test
    void tableStatsInABatch() {
        String first = createTable(member, List.of(Map.of("a", 1), Map.of("a", 2)));
        String second = createTable(member, List.of(Map.of("b", "ü")));
        String foreign = post(otherAdmin, "/table/create",
                Map.of("table", Map.of("project_id", otherProject, "rows", List.of(Map.of("c", 3))))).then()
                        .statusCode(200).extract().path("digest");
        // the project's tables in the order asked, once each; another project's table and an unknown one left out
        post(viewer, "/table/query_stats_batch",
                Map.of("project_id", project, "digests", List.of(second, foreign, "0".repeat(64), first, second),
                        "include_storage_size", true)).then().statusCode(200)
                                .body("tables.digest", contains(second, first)).body("tables.count", contains(1, 2))
                                .body("tables[0].storage_size_bytes", org.hamcrest.Matchers.greaterThan(0));
        post(viewer, "/table/query_stats_batch", Map.of("project_id", project, "digests", List.of(first))).then()
                .statusCode(200).body("tables[0].count", equalTo(2)).body("tables[0].storage_size_bytes", nullValue());
        post(viewer, "/table/query_stats_batch", Map.of("project_id", project)).then().statusCode(200).body("tables",
                hasSize(0));
        for (Account refused : List.of(outsider, otherViewer)) {
            post(refused, "/table/query_stats_batch", Map.of("project_id", project, "digests", List.of(first))).then()
                    .statusCode(403);
        }
        post(viewer, "/table/query_stats_batch", Map.of("project_id", project, "digests", List.of("not-a-digest")))
                .then().statusCode(422).body("detail[0].loc", contains("body", "digests", 0));
    }

    @Test
    void aTableMadeOfRowsTheProjectHas() {
        List<String> chunk1 = post(member, "/table/create",
                Map.of("table", Map.of("project_id", project, "rows", List.of(Map.of("i", 0), Map.of("i", 1))))).then()
                        .statusCode(200).extract().path("row_digests");
        List<String> chunk2 = post(member, "/table/create",
                Map.of("table", Map.of("project_id", project, "rows", List.of(Map.of("i", 2))))).then().statusCode(200)
                        .extract().path("row_digests");
        List<String> all = new java.util.ArrayList<>(chunk1);
        all.addAll(chunk2);
        String whole = Digests.ofTable(all);
        post(member, "/table/create_from_digests",
                Map.of("project_id", project, "row_digests", all, "expected_digest", whole)).then().statusCode(200)
                        .body("digest", equalTo(whole));
        post(viewer, "/table/query", Map.of("project_id", project, "digest", whole)).then().statusCode(200)
                .body("rows.val.i", contains(0, 1, 2));
        // the same as a /table/create of those rows
        assertEquals(whole, createTable(member, List.of(Map.of("i", 0), Map.of("i", 1), Map.of("i", 2))));
        post(member, "/table/create_from_digests", Map.of("project_id", project, "row_digests", List.of())).then()
                .statusCode(200).body("digest", equalTo(Digests.ofTable(List.of())));

        // a row of another project's table is not reachable by its digest; a wrong expected digest is named
        List<String> foreign = post(otherAdmin, "/table/create",
                Map.of("table", Map.of("project_id", otherProject, "rows", List.of(Map.of("secret", 1))))).then()
                        .statusCode(200).extract().path("row_digests");
        post(member, "/table/create_from_digests",
                Map.of("project_id", project, "row_digests", List.of(all.get(0), foreign.get(0)))).then()
                        .statusCode(422).body("detail[0].loc", contains("body", "row_digests", 1));
        post(member, "/table/create_from_digests",
                Map.of("project_id", project, "row_digests", all, "expected_digest", "0".repeat(64))).then()
                        .statusCode(422).body("detail[0].loc", contains("body", "expected_digest"))
                        .body("detail[0].msg", equalTo("The content's digest is " + whole));
        for (Account refused : List.of(viewer, otherViewer, outsider)) {
            post(refused, "/table/create_from_digests", Map.of("project_id", project, "row_digests", all)).then()
                    .statusCode(403);
        }
    }
}

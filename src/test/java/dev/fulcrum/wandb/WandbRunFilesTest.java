package dev.fulcrum.wandb;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

/**
 * A run's files through the W&B protocol ({@code createRunFiles}, a PUT to the signed URL, {@code run.files()}) and the
 * runs API ({@code .../runs/{run}/files}, {@code .../file} with {@code Range}, {@code .../media}), with the runs API's
 * rights: members write, viewers read, others are refused, anonymous callers are 401.
 */
@QuarkusTest
class WandbRunFilesTest extends LabTest {

    static final String CREATE = """
            mutation CreateRunFiles($entity: String!, $project: String!, $run: String!, $files: [String!]!) {
              createRunFiles(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) {
                runID uploadHeaders files { name uploadUrl }
              }
            }""";

    static final String FILES = """
            query RunFiles($project: String!, $entity: String!, $name: String!, $fileCursor: String,
                $fileLimit: Int = 50, $fileNames: [String] = [], $upload: Boolean = false, $pattern: String) {
              project(name: $project, entityName: $entity) {
                internalId
                run(name: $name) {
                  fileCount
                  files(names: $fileNames, after: $fileCursor, first: $fileLimit, pattern: $pattern) {
                    edges { node { id name url(upload: $upload) directUrl sizeBytes mimetype updatedAt md5 } cursor }
                    pageInfo { endCursor hasNextPage }
                  }
                }
              }
            }""";

    private String run;

    static RequestSpecification rest(Account account) {
        RequestSpecification spec = given().filter(Contract.RUNS).contentType(ContentType.JSON);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    static JsonPath graphql(Account account, String query, Map<String, Object> variables) {
        return WandbGraphqlTest.graphql(account, query, variables).then().statusCode(200).extract().jsonPath();
    }

    @BeforeEach
    void aRun() {
        run = "/api/v1/entities/" + team.name + "/projects/files/runs/r1";
        rest(member).body(Map.of("name", "r1")).post("/api/v1/entities/" + team.name + "/projects/files/runs").then()
                .statusCode(201);
    }

    private String uploadUrl(Account account, String name) {
        return graphql(account, CREATE,
                Map.of("entity", team.name, "project", "files", "run", "r1", "files", List.of(name)))
                        .getString("data.createRunFiles.files[0].uploadUrl");
    }

    private void upload(String name, byte[] bytes) {
        given().filter(Contract.of("wandb")).contentType("application/octet-stream").body(bytes)
                .put(uploadUrl(member, name)).then().statusCode(200);
    }

    @Test
    void aRunFileLargerThanAnyJsonBodyIsStoredWhateverItsType() {
        // bounded by fulcrum.artifacts.max-file-bytes, not by the JSON body limit (64 MiB), with or without a type
        byte[] big = new byte[64 * 1024 * 1024 + 1];
        big[big.length - 1] = 7;
        given().body(big).put(uploadUrl(member, "model.bin")).then().statusCode(200);
        rest(viewer).get(run + "/files").then().statusCode(200).body("files.find { it.name == 'model.bin' }.size",
                equalTo(big.length));
    }

    @Test
    void filesUploadedToSignedUrlsAreListedAndDownloadedWithRanges() {
        byte[] first = "first version".getBytes(StandardCharsets.UTF_8);
        byte[] image = new byte[1000];
        for (int i = 0; i < image.length; i++) {
            image[i] = (byte) i;
        }
        upload("notes.txt", first);
        upload("media/images/img_0_ab.png", image);
        upload("notes.txt", "second".getBytes(StandardCharsets.UTF_8)); // replaces the first

        rest(viewer).get(run + "/files").then().statusCode(200)
                .body("files.name", equalTo(List.of("media/images/img_0_ab.png", "notes.txt")))
                .body("files[0].content_type", equalTo("image/png")).body("files[1].size", equalTo(6))
                .body("total", equalTo(2)).body("next_after", nullValue());
        rest(viewer).queryParam("limit", 1).get(run + "/files").then().statusCode(200)
                .body("files.name", equalTo(List.of("media/images/img_0_ab.png")))
                .body("next_after", equalTo("media/images/img_0_ab.png"));
        rest(viewer).queryParam("name", "notes.txt").get(run + "/file").then().statusCode(200).body(equalTo("second"));
        byte[] range = rest(viewer).header("Range", "bytes=10-19").queryParam("name", "media/images/img_0_ab.png")
                .get(run + "/file").then().statusCode(206).header("Content-Range", "bytes 10-19/1000").extract()
                .asByteArray();
        assertArrayEquals(java.util.Arrays.copyOfRange(image, 10, 20), range);
        rest(viewer).header("Range", "bytes=5000-").queryParam("name", "notes.txt").get(run + "/file").then()
                .statusCode(416);
        rest(viewer).queryParam("name", "missing.txt").get(run + "/file").then().statusCode(404);

        // the SDK's run.files(): signed download URLs, read without credentials
        JsonPath listed = graphql(viewer, FILES,
                Map.of("project", "files", "entity", team.name, "name", "r1", "fileNames", List.of("notes.txt")));
        assertEquals(2, listed.getInt("data.project.run.fileCount"));
        String url = listed.getString("data.project.run.files.edges[0].node.url");
        given().get(url).then().statusCode(200).body(equalTo("second"));
        given().get(url.replace("signature=", "signature=x")).then().statusCode(403);
        JsonPath paged = graphql(viewer, FILES,
                Map.of("project", "files", "entity", team.name, "name", "r1", "fileLimit", 1));
        assertEquals("media/images/img_0_ab.png", paged.getString("data.project.run.files.pageInfo.endCursor"));
        assertEquals(true, paged.getBoolean("data.project.run.files.pageInfo.hasNextPage"));
        assertEquals(List.of("notes.txt"),
                graphql(viewer, FILES,
                        Map.of("project", "files", "entity", team.name, "name", "r1", "pattern", "%.txt"))
                                .getList("data.project.run.files.edges.node.name"));
    }

    @Test
    void historyMediaValuesAreKeptBesideTheNumbersAndListed() {
        String row = "{\"_step\": 0, \"loss\": 0.5, \"img\": {\"_type\": \"image-file\","
                + " \"path\": \"media/images/a.png\", \"list\": [null, 1]}}";
        given().filter(Contract.of("wandb")).auth().preemptive().basic("api", member.key())
                .contentType(ContentType.JSON)
                .body(Map.of("files",
                        Map.of("wandb-history.jsonl",
                                Map.of("offset", 0, "content", List.of(row, "{\"_step\": 1, \"loss\": 0.25}")))))
                .post("/files/" + team.name + "/files/r1/file_stream").then().statusCode(200);
        rest(viewer).get(run + "/media").then().statusCode(200).body("rows.step", equalTo(List.of(0)))
                .body("rows[0].values.img.path", equalTo("media/images/a.png"))
                .body("rows[0].values.loss", nullValue());
        rest(viewer).get(run + "/history").then().statusCode(200).body("rows[0].img", nullValue()).body("rows[1].loss",
                equalTo(0.25f));
        rest(viewer).get(run + "/summary").then().statusCode(200).body("img", nullValue());
    }

    @Test
    void theRunsApisRightsDecideWhoReadsAndWrites() {
        upload("a.txt", new byte[] { 1 });
        rest(viewer).get(run + "/files").then().statusCode(200);
        rest(viewer).get(run + "/media").then().statusCode(200).body("rows", equalTo(List.of()));
        rest(outsider).get(run + "/files").then().statusCode(403);
        rest(outsider).queryParam("name", "a.txt").get(run + "/file").then().statusCode(403);
        rest(null).get(run + "/files").then().statusCode(401);
        rest(null).queryParam("name", "a.txt").get(run + "/file").then().statusCode(401);
        rest(member).get("/api/v1/entities/" + team.name + "/projects/files/runs/nothing/files").then().statusCode(404);
        // a viewer gets no upload URL; nor does a name that climbs out of the run
        WandbGraphqlTest
                .graphql(viewer, CREATE,
                        Map.of("entity", team.name, "project", "files", "run", "r1", "files", List.of("x.txt")))
                .then().body("errors[0].extensions.status", equalTo(403));
        WandbGraphqlTest
                .graphql(member, CREATE,
                        Map.of("entity", team.name, "project", "files", "run", "r1", "files", List.of("../x.txt")))
                .then().body("errors[0].extensions.status", equalTo(422));
        rest(member).queryParam("name", "a\u0000b").get(run + "/file").then().statusCode(422);
        String mark = """
                mutation MarkRunFilesUploaded($entity: String!, $project: String!, $run: String!, $files: [String!]!) {
                  markRunFilesUploaded(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) {
                    success
                  }
                }""";
        Map<String, Object> marked = Map.of("entity", team.name, "project", "files", "run", "r1", "files",
                List.of("a.txt"));
        WandbGraphqlTest.graphql(member, mark, marked).then().statusCode(200).body("data.markRunFilesUploaded.success",
                equalTo(true));
        WandbGraphqlTest.graphql(viewer, mark, marked).then().body("errors[0].extensions.status", equalTo(403));
    }
}

package dev.fulcrum.artifacts;

import static dev.fulcrum.artifacts.ArtifactsClient.as;
import static dev.fulcrum.artifacts.ArtifactsClient.collections;
import static dev.fulcrum.artifacts.ArtifactsClient.upload;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

@QuarkusTest
class ArtifactsTest extends LabTest {

    private String collections;
    private String models;

    @BeforeEach
    void paths() {
        collections = collections(team.name, "vision");
        models = collections + "/resnet";
    }

    private void createModels() {
        as(member).contentType(ContentType.JSON).body(Map.of("name", "resnet", "type", "model", "description", "CNNs"))
                .post(collections).then().statusCode(201);
    }

    private static Map<String, String> files(String... pathsAndContents) {
        Map<String, String> files = new LinkedHashMap<>();
        for (int i = 0; i < pathsAndContents.length; i += 2) {
            files.put(pathsAndContents[i], pathsAndContents[i + 1]);
        }
        return files;
    }

    @Test
    void collectionsAreCreatedListedAndDeleted() {
        as(member).contentType(ContentType.JSON).body(Map.of("name", "resnet", "type", "model", "description", "CNNs"))
                .post(collections).then().statusCode(201).body("name", equalTo("resnet")).body("type", equalTo("model"))
                .body("project", equalTo("vision")).body("version_count", equalTo(0))
                .body("created_by", equalTo(member.name()));
        as(member).contentType(ContentType.JSON).body(Map.of("name", "train-set", "type", "dataset")).post(collections)
                .then().statusCode(201);
        as(member).contentType(ContentType.JSON).body(Map.of("name", "resnet", "type", "model")).post(collections)
                .then().statusCode(409).contentType("application/problem+json");
        as(viewer).get(collections).then().statusCode(200).body("collections.name", contains("resnet", "train-set"));
        as(viewer).queryParam("type", "dataset").get(collections).then().body("collections.name",
                contains("train-set"));
        as(viewer).get(models).then().statusCode(200).body("description", equalTo("CNNs"));
        as(viewer).delete(collections + "/train-set").then().statusCode(403);
        as(member).delete(collections + "/train-set").then().statusCode(204);
        as(member).delete(collections + "/train-set").then().statusCode(404);
        as(viewer).get(collections + "/train-set").then().statusCode(404);
    }

    @Test
    void badNamesAreRefusedWithTheRule() {
        for (String bad : List.of("", "-x", "a b", "a/b", "ü", "x".repeat(129))) {
            as(member).contentType(ContentType.JSON).body(Map.of("name", bad, "type", "model")).post(collections).then()
                    .statusCode(422).body("errors[0].field", equalTo("name"))
                    .body("detail", containsString("1 to 128"));
        }
        as(member).contentType(ContentType.JSON).body(Map.of("name", "ok", "type", "no spaces")).post(collections)
                .then().statusCode(422).body("errors[0].field", equalTo("type"));
        as(member).contentType(ContentType.JSON).body(Map.of("name", "ok")).post(collections).then().statusCode(422);
        createModels();
        upload(member, models, files("a.txt", "a"), null, null).then().statusCode(201);
        as(member).put(models + "/versions/v0/aliases/bad name").then().statusCode(422);
        as(member).put(models + "/versions/v0/aliases/v7").then().statusCode(422).body("errors[0].field",
                equalTo("alias"));
        as(member).put(models + "/versions/v0/aliases/latest").then().statusCode(422);
        as(member).put(models + "/versions/v0/tags/" + "t".repeat(129)).then().statusCode(422);
        as(member).get(models + "/versions/no such").then().statusCode(422);
    }

    @Test
    void versionsAreNumberedAndLatestMovesToTheNewest() {
        createModels();
        upload(member, models, files("weights/model.bin", "first weights", "README.md", "hello"),
                "{\"accuracy\": 0.91, \"arch\": \"resnet50\"}", null).then().statusCode(201)
                        .body("version", equalTo("v0")).body("version_index", equalTo(0))
                        .body("aliases", contains("latest")).body("metadata.accuracy", equalTo(0.91f))
                        .body("files.path", contains("README.md", "weights/model.bin")).body("file_count", equalTo(2))
                        .body("size", equalTo(18))
                        .body("reference", equalTo("wandb-artifact:///" + team.name + "/vision/resnet:v0"))
                        .body("created_by", equalTo(member.name()));
        upload(member, models, files("weights/model.bin", "second weights"), "{\"accuracy\": 0.95}", null).then()
                .statusCode(201).body("version", equalTo("v1")).body("aliases", contains("latest"));
        as(viewer).get(models + "/versions/v0").then().statusCode(200).body("aliases", empty());
        as(viewer).get(models + "/versions/latest").then().statusCode(200).body("version", equalTo("v1"));
        as(viewer).get(models + "/versions").then().statusCode(200).body("versions.version", contains("v1", "v0"))
                .body("versions[0].files", nullValue()).body("next_offset", nullValue());
        as(viewer).queryParam("limit", 1).get(models + "/versions").then().body("versions.version", contains("v1"))
                .body("next_offset", equalTo(1));
        as(viewer).queryParam("limit", 1).queryParam("offset", 1).get(models + "/versions").then()
                .body("versions.version", contains("v0")).body("next_offset", nullValue());
        as(viewer).get(models).then().body("version_count", equalTo(2));

        // identical files and metadata: the existing version, not a new one
        upload(member, models, files("weights/model.bin", "second weights"), "{\"accuracy\": 0.95}", null).then()
                .statusCode(200).body("version", equalTo("v1"));
        as(viewer).get(models + "/versions/v2").then().statusCode(404);
        as(viewer).get(models + "/versions/v1/files").then().statusCode(200).body("files.path",
                contains("weights/model.bin"));
    }

    @Test
    void uploadsAreValidated() {
        createModels();
        upload(member, collections + "/unknown", files("a", "a"), null, null).then().statusCode(404);
        upload(member, collections + "/new-set", files("a", "a"), null, "dataset").then().statusCode(201)
                .body("type", equalTo("dataset")).body("collection", equalTo("new-set"));
        upload(member, models, files("../escape", "x"), null, null).then().statusCode(422).body("errors[0].field",
                equalTo("file[0]"));
        upload(member, models, files("/abs", "x"), null, null).then().statusCode(422);
        upload(member, models, files("a//b", "x"), null, null).then().statusCode(422);
        upload(member, models, files("a.txt", "x"), "[1, 2]", null).then().statusCode(422).body("errors[0].field",
                equalTo("metadata"));
        upload(member, models, files("a.txt", "x"), "{not json", null).then().statusCode(422);
        upload(member, models, files("a.txt", "x"), "{\"loss\": 1e999}", null).then().statusCode(422)
                .body("errors[0].field", equalTo("metadata"));
        as(member).contentType("multipart/form-data").multiPart("description", "no files").post(models + "/versions")
                .then().statusCode(422);
        as(member).contentType("multipart/form-data").multiPart("file", "same.txt", "1".getBytes())
                .multiPart("file", "same.txt", "2".getBytes()).post(models + "/versions").then().statusCode(422)
                .body("detail", containsString("twice"));
        // a file that is also a directory of another cannot be written out as one tree
        as(member).contentType("multipart/form-data").multiPart("file", "nested", "1".getBytes())
                .multiPart("file", "nested/inner.bin", "2".getBytes()).post(models + "/versions").then().statusCode(422)
                .body("detail", containsString("nested"));
        as(viewer).get(models + "/versions").then().body("versions", empty());
    }

    /**
     * A part's Content-Type is served back with the file, so it must be one media type (issue 23: such a file was
     * stored, then every download of it answered 500).
     */
    @Test
    void aPartWhoseContentTypeIsNoMediaTypeIsRefused() {
        createModels();
        for (String type : List.of("garbage", "/", "", "text/html, image/png", "text/plain; charset")) {
            // written by hand: a client library would not send these
            String body = "--edge\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                    + "Content-Type: " + type + "\r\n\r\nx\r\n--edge--\r\n";
            as(member).contentType("multipart/form-data; boundary=edge").body(body.getBytes())
                    .post(models + "/versions").then().statusCode(422).contentType("application/problem+json")
                    .body("errors[0].field", equalTo("file[0]"));
        }
        as(member).contentType("multipart/form-data")
                .multiPart("file", "a.json", "{}".getBytes(), "application/json; charset=utf-8")
                .post(models + "/versions").then().statusCode(201);
        // without the contract's filter: its validator reads a JSON file as the response's schema
        given().auth().oauth2(viewer.key()).queryParam("path", "a.json").get(models + "/versions/v0/download").then()
                .statusCode(200).contentType("application/json; charset=utf-8");
    }

    @Test
    void anyRangeOfAnEmptyFileIsUnsatisfiable() {
        createModels();
        as(member).contentType("multipart/form-data").multiPart("file", "empty.bin", new byte[0])
                .post(models + "/versions").then().statusCode(201);
        for (String range : List.of("bytes=-5", "bytes=0-", "bytes=0-0")) {
            as(viewer).queryParam("path", "empty.bin").header("Range", range).get(models + "/versions/v0/download")
                    .then().statusCode(416).header("Content-Range", "bytes */0");
        }
        // without the contract's filter: its validator wants a body where an empty file has none
        given().auth().oauth2(viewer.key()).queryParam("path", "empty.bin").get(models + "/versions/v0/download").then()
                .statusCode(200).header("Content-Length", "0");
    }

    @Test
    void downloadsStreamWithLengthEtagAndRanges() {
        createModels();
        String digest = upload(member, models, files("data.txt", "0123456789"), null, null).then().statusCode(201)
                .extract().path("files[0].digest");
        String file = models + "/versions/v0/download";
        as(viewer).queryParam("path", "data.txt").get(file).then().statusCode(200).header("Content-Length", "10")
                .header("ETag", "\"" + digest + "\"").header("Accept-Ranges", "bytes")
                .contentType(containsString("text/plain")).body(equalTo("0123456789"));
        as(viewer).queryParam("path", "data.txt").header("Range", "bytes=2-5").get(file).then().statusCode(206)
                .header("Content-Range", "bytes 2-5/10").header("Content-Length", "4").body(equalTo("2345"));
        as(viewer).queryParam("path", "data.txt").header("Range", "bytes=7-").get(file).then().statusCode(206)
                .body(equalTo("789"));
        as(viewer).queryParam("path", "data.txt").header("Range", "bytes=-3").get(file).then().statusCode(206)
                .header("Content-Range", "bytes 7-9/10").body(equalTo("789"));
        as(viewer).queryParam("path", "data.txt").header("Range", "bytes=10-").get(file).then().statusCode(416)
                .header("Content-Range", "bytes */10").contentType("application/problem+json");
        as(viewer).queryParam("path", "data.txt").header("Range", "bytes=0-1,4-5").get(file).then().statusCode(200)
                .body(equalTo("0123456789"));
        as(viewer).queryParam("path", "data.txt").header("If-None-Match", "\"" + digest + "\"").get(file).then()
                .statusCode(304);
        as(viewer).queryParam("path", "other.txt").get(file).then().statusCode(404);
        as(viewer).get(file).then().statusCode(422);
        as(outsider).queryParam("path", "data.txt").get(file).then().statusCode(403);
        as(null).queryParam("path", "data.txt").get(file).then().statusCode(401);
    }

    @Test
    void aliasesMoveAndTagsAccumulate() {
        createModels();
        upload(member, models, files("a", "1"), null, null).then().statusCode(201);
        upload(member, models, files("a", "2"), null, null).then().statusCode(201);
        as(member).put(models + "/versions/v0/aliases/best").then().statusCode(200).body("aliases", contains("best"));
        as(member).put(models + "/versions/v1/aliases/best").then().statusCode(200).body("aliases",
                contains("best", "latest"));
        as(viewer).get(models + "/versions/v0").then().body("aliases", empty());
        as(viewer).get(models + "/versions/best").then().body("version", equalTo("v1"));
        as(member).delete(models + "/versions/v0/aliases/best").then().statusCode(404);
        as(member).delete(models + "/versions/v1/aliases/best").then().statusCode(200).body("aliases",
                contains("latest"));
        as(viewer).get(models + "/versions/best").then().statusCode(404);

        as(member).put(models + "/versions/v0/tags/baseline").then().statusCode(200).body("tags", contains("baseline"));
        as(member).put(models + "/versions/v0/tags/approved").then().statusCode(200).body("tags",
                contains("approved", "baseline"));
        as(member).put(models + "/versions/v0/tags/approved").then().statusCode(200).body("tags", hasSize(2));
        as(member).delete(models + "/versions/v0/tags/baseline").then().statusCode(200).body("tags",
                contains("approved"));
        as(member).delete(models + "/versions/v0/tags/baseline").then().statusCode(404);
        as(viewer).put(models + "/versions/v0/tags/nope").then().statusCode(403);
        as(viewer).put(models + "/versions/v0/aliases/nope").then().statusCode(403);
        as(member).put(models + "/versions/v9/tags/x").then().statusCode(404);
    }

    @Test
    void changesWriteTheirEventsWithThePayloadVariables() {
        createModels();
        upload(member, models, files("a", "1"), "{\"accuracy\": 0.9, \"nested\": {\"k\": 1}}", null).then()
                .statusCode(201);
        as(member).put(models + "/versions/v0/aliases/production").then().statusCode(200);
        as(member).put(models + "/versions/v0/aliases/production").then().statusCode(200);
        as(member).put(models + "/versions/v0/tags/approved").then().statusCode(200);
        as(member).put(models + "/versions/v0/tags/approved").then().statusCode(200);
        as(member).put(models + "/versions/v0/aliases/v1").then().statusCode(422);

        String events = "/api/v1/entities/" + team.name + "/projects/vision/events";
        given().filter(Contract.EVENTS).auth().oauth2(admin.key()).get(events).then().statusCode(200)
                .body("events.type",
                        contains("ADD_ARTIFACT_TAG", "ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_ALIAS", "CREATE_ARTIFACT"))
                .body("events[0].payload.tag", equalTo("approved"))
                .body("events[1].payload.alias", equalTo("production"))
                .body("events[1].payload.artifact_version_string", equalTo(team.name + "/vision/resnet:production"))
                .body("events[1].payload.artifact_version",
                        equalTo("wandb-artifact:///" + team.name + "/vision/resnet:v0"))
                .body("events[1].payload.artifact_collection_name", equalTo("resnet"))
                .body("events[1].payload.artifact_metadata.accuracy", equalTo(0.9f))
                .body("events[1].payload.entity_name", equalTo(team.name))
                .body("events[1].payload.project_name", equalTo("vision"))
                .body("events[1].payload.event_author", equalTo(member.name()))
                .body("events[2].payload.alias", equalTo("latest"))
                .body("events[2].payload.artifact_version_string", equalTo(team.name + "/vision/resnet:latest"))
                .body("events[3].payload.version_index", equalTo(0))
                .body("events[3].payload.artifact_type", equalTo("model"));
    }

    @Test
    void referencesResolveBothWays() {
        createModels();
        upload(member, models, files("a", "1"), null, null).then().statusCode(201);
        upload(member, models, files("a", "2"), null, null).then().statusCode(201);
        as(member).put(models + "/versions/v0/aliases/stable").then().statusCode(200);
        String base = "wandb-artifact:///" + team.name + "/vision/resnet";
        String resolve = "/api/v1/artifacts/resolve";
        as(viewer).queryParam("ref", base + ":stable").get(resolve).then().statusCode(200)
                .body("version", equalTo("v0")).body("reference", equalTo(base + ":v0"))
                .body("files.path", contains("a"));
        as(viewer).queryParam("ref", base).get(resolve).then().statusCode(200).body("version", equalTo("v1"));
        as(viewer).queryParam("ref", base + ":v1").get(resolve).then().statusCode(200).body("version", equalTo("v1"));
        String v0 = as(viewer).queryParam("ref", base + ":stable").get(resolve).then().extract().path("reference");
        as(viewer).queryParam("ref", v0).get(resolve).then().body("version", equalTo("v0"));
        as(viewer).queryParam("ref", base + ":v5").get(resolve).then().statusCode(404);
        as(viewer).queryParam("ref", "wandb-artifact:///" + team.name + "/vision/nothing").get(resolve).then()
                .statusCode(404);
        as(viewer).queryParam("ref", "wandb-artifact:///nobody-here/x/y").get(resolve).then().statusCode(404);
        as(viewer).queryParam("ref", "s3://bucket/key").get(resolve).then().statusCode(422).body("errors[0].field",
                equalTo("ref"));
        as(viewer).get(resolve).then().statusCode(422);
        as(outsider).queryParam("ref", base).get(resolve).then().statusCode(403);
        as(null).queryParam("ref", base).get(resolve).then().statusCode(401);
    }

    @Test
    void aRegistryListsItsCollectionsWithTheTypeOfTheirNewestLink() {
        Registry registry = fixtures.registry("catalog", admin);
        Account registryViewer = fixtures.user("catalog-viewer");
        fixtures.registryMember(registry, member, Role.MEMBER);
        fixtures.registryMember(registry, registryViewer, Role.VIEWER);
        String list = "/api/v1/registries/" + registry.name + "/collections";
        as(registryViewer).get(list).then().statusCode(200).body("collections", empty());

        createModels();
        upload(member, models, files("w.bin", "weights"), null, null).then().statusCode(201);
        upload(member, models, files("w.bin", "better"), null, null).then().statusCode(201);
        upload(member, collections + "/train-set", files("rows.jsonl", "{}"), null, "dataset").then().statusCode(201);
        for (String version : List.of("v0", "v1")) {
            as(member).contentType(ContentType.JSON).body(Map.of("registry", registry.name, "collection", "classifier"))
                    .post(models + "/versions/" + version + "/links").then().statusCode(201);
        }
        as(member).contentType(ContentType.JSON).body(Map.of("registry", registry.name, "collection", "corpus"))
                .post(collections + "/train-set/versions/v0/links").then().statusCode(201);

        as(registryViewer).get(list).then().statusCode(200).body("collections.name", contains("classifier", "corpus"))
                .body("collections.type", contains("model", "dataset"))
                .body("collections.version_count", contains(2, 1))
                .body("collections[0].registry", equalTo(registry.name))
                .body("collections[0].latest_linked_at", org.hamcrest.Matchers.notNullValue());
        as(registryViewer).queryParam("type", "dataset").get(list).then().statusCode(200).body("collections.name",
                contains("corpus"));
        as(outsider).get(list).then().statusCode(403);
        as(null).get(list).then().statusCode(401);
        as(registryViewer).get("/api/v1/registries/no-such-registry/collections").then().statusCode(404);
    }

    @Test
    void linkedVersionsAreReadableByRegistryMembers() {
        Registry registry = fixtures.registry("models", admin);
        Account registryViewer = fixtures.user("registry-viewer");
        fixtures.registryMember(registry, member, Role.MEMBER);
        fixtures.registryMember(registry, registryViewer, Role.VIEWER);
        fixtures.registryMember(registry, viewer, Role.VIEWER);
        createModels();
        upload(member, models, files("w.bin", "weights"), "{\"accuracy\": 0.97}", null).then().statusCode(201);
        upload(member, models, files("w.bin", "better"), null, null).then().statusCode(201);
        Map<String, String> link = Map.of("registry", registry.name, "collection", "classifier");

        as(member).contentType(ContentType.JSON).body(link).post(models + "/versions/v0/links").then().statusCode(201)
                .body("version", equalTo("v0")).body("collection", equalTo("classifier"))
                .body("source", equalTo("wandb-artifact:///" + team.name + "/vision/resnet:v0"));
        as(member).contentType(ContentType.JSON).body(link).post(models + "/versions/latest/links").then()
                .statusCode(201).body("version", equalTo("v1"));
        as(member).contentType(ContentType.JSON).body(link).post(models + "/versions/v0/links").then().statusCode(200)
                .body("version", equalTo("v0"));
        as(viewer).contentType(ContentType.JSON).body(link).post(models + "/versions/v0/links").then().statusCode(403);
        as(admin).contentType(ContentType.JSON).body(Map.of("registry", "no-registry", "collection", "c"))
                .post(models + "/versions/v0/links").then().statusCode(404);
        as(member).contentType(ContentType.JSON).body(Map.of("registry", registry.name, "collection", "bad name"))
                .post(models + "/versions/v0/links").then().statusCode(422);

        String linked = "/api/v1/registries/" + registry.name + "/collections/classifier/versions";
        as(registryViewer).get(linked).then().statusCode(200).body("versions.version", contains("v1", "v0"))
                .body("versions[0].aliases", contains("latest")).body("versions[0].registry", equalTo(registry.name))
                .body("versions[1].source", equalTo("wandb-artifact:///" + team.name + "/vision/resnet:v0"));
        as(registryViewer).get(linked + "/v0").then().statusCode(200).body("metadata.accuracy", equalTo(0.97f))
                .body("files.path", contains("w.bin"));
        as(registryViewer).get(linked + "/latest").then().statusCode(200).body("version", equalTo("v1"));
        as(registryViewer).queryParam("path", "w.bin").get(linked + "/v0/download").then().statusCode(200)
                .body(equalTo("weights"));
        as(registryViewer).get(linked + "/v7").then().statusCode(404);
        as(registryViewer).get("/api/v1/registries/" + registry.name + "/collections/none/versions").then()
                .statusCode(404);
        as(outsider).get(linked).then().statusCode(403);
        as(null).get(linked).then().statusCode(401);
        // the registry viewer reads the registry, not the project
        as(registryViewer).get(models + "/versions/v0").then().statusCode(403);

        String events = "/api/v1/registries/" + registry.name + "/events";
        given().filter(Contract.EVENTS).auth().oauth2(admin.key()).get(events).then().statusCode(200)
                .body("events.type",
                        contains("ADD_ARTIFACT_ALIAS", "LINK_ARTIFACT", "ADD_ARTIFACT_ALIAS", "LINK_ARTIFACT"))
                .body("events[3].payload.artifact_collection_name", equalTo("classifier"))
                .body("events[3].payload.registry_name", equalTo(registry.name))
                .body("events[3].payload.source_collection_name", equalTo("resnet"))
                .body("events[3].payload.artifact_metadata.accuracy", equalTo(0.97f))
                .body("events[3].project", equalTo("vision")).body("events[2].payload.alias", equalTo("latest"))
                .body("events[2].payload.artifact_version_string", equalTo(registry.name + "/classifier:latest"));
    }

    @Test
    void registryMembersGiveLinkedVersionsAliasesAndTags() {
        Registry registry = fixtures.registry("models", admin);
        Account registryViewer = fixtures.user("registry-viewer");
        fixtures.registryMember(registry, member, Role.MEMBER);
        fixtures.registryMember(registry, registryViewer, Role.VIEWER);
        createModels();
        upload(member, models, files("w", "1"), "{\"accuracy\": 0.5}", null).then().statusCode(201);
        upload(member, models, files("w", "2"), null, null).then().statusCode(201);
        Map<String, String> link = Map.of("registry", registry.name, "collection", "classifier");
        as(member).contentType(ContentType.JSON).body(link).post(models + "/versions/v0/links").then().statusCode(201);
        as(member).contentType(ContentType.JSON).body(link).post(models + "/versions/v1/links").then().statusCode(201);
        String linked = "/api/v1/registries/" + registry.name + "/collections/classifier/versions";

        as(member).put(linked + "/v0/aliases/production").then().statusCode(200).body("aliases",
                contains("production"));
        as(member).put(linked + "/v1/aliases/production").then().statusCode(200).body("aliases",
                contains("latest", "production"));
        as(registryViewer).get(linked + "/v0").then().body("aliases", empty());
        as(registryViewer).get(linked + "/production").then().statusCode(200).body("version", equalTo("v1"));
        as(member).put(linked + "/v1/aliases/production").then().statusCode(200);
        as(registryViewer).put(linked + "/v0/aliases/staging").then().statusCode(403);
        as(outsider).put(linked + "/v0/aliases/staging").then().statusCode(403);
        as(member).put(linked + "/v0/aliases/latest").then().statusCode(422);
        as(member).put(linked + "/v9/aliases/staging").then().statusCode(404);
        as(member).delete(linked + "/v0/aliases/production").then().statusCode(404);
        as(member).delete(linked + "/production/aliases/production").then().statusCode(200).body("aliases",
                contains("latest"));
        as(registryViewer).get(linked + "/production").then().statusCode(404);

        as(member).put(linked + "/v0/tags/candidate").then().statusCode(200).body("tags", contains("candidate"));
        as(member).put(linked + "/v0/tags/candidate").then().statusCode(200).body("tags", contains("candidate"));
        as(registryViewer).get(linked).then().body("versions[1].tags", contains("candidate"));
        as(member).delete(linked + "/v0/tags/candidate").then().statusCode(200).body("tags", empty());
        as(member).delete(linked + "/v0/tags/candidate").then().statusCode(404);
        // the project version keeps its own aliases and tags
        as(member).get(models + "/versions/v0").then().body("tags", empty()).body("aliases", empty());

        given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/registries/" + registry.name + "/events").then().statusCode(200)
                .body("events.type",
                        contains("REMOVE_ARTIFACT_TAG", "ADD_ARTIFACT_TAG", "ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_ALIAS",
                                "ADD_ARTIFACT_ALIAS", "LINK_ARTIFACT", "ADD_ARTIFACT_ALIAS", "LINK_ARTIFACT"))
                .body("events[0].payload.tag", equalTo("candidate")).body("events[1].payload.tag", equalTo("candidate"))
                .body("events[1].payload.artifact_collection_name", equalTo("classifier"))
                .body("events[2].payload.alias", equalTo("production")).body("events[2].payload.version", equalTo("v1"))
                .body("events[2].payload.artifact_version_string", equalTo(registry.name + "/classifier:production"))
                .body("events[2].payload.registry_name", equalTo(registry.name))
                .body("events[3].payload.version", equalTo("v0"))
                .body("events[3].payload.artifact_metadata.accuracy", equalTo(0.5f))
                .body("events[3].registry", equalTo(registry.name)).body("events[3].project", equalTo("vision"));
    }

    @Test
    void permissions() {
        createModels();
        upload(member, models, files("a", "1"), null, null).then().statusCode(201);
        as(null).get(collections).then().statusCode(401);
        as(outsider).get(collections).then().statusCode(403);
        as(outsider).get(models + "/versions/v0").then().statusCode(403);
        upload(outsider, models, files("a", "2"), null, null).then().statusCode(403);
        upload(viewer, models, files("a", "2"), null, null).then().statusCode(403);
        upload(null, models, files("a", "2"), null, null).then().statusCode(401);
        as(viewer).contentType(ContentType.JSON).body(Map.of("name", "x", "type", "model")).post(collections).then()
                .statusCode(403);
        as(viewer).get(models + "/versions").then().statusCode(200).body("versions", hasSize(1));
        as(viewer).get(models + "/versions/v0/files").then().statusCode(200);
        as(viewer).get(collections(team.name, "no-project")).then().statusCode(404);
        as(viewer).get(collections("no-such-team", "p")).then().statusCode(404);
        // a member's first write creates the project
        upload(member, collections(team.name, "fresh") + "/data", files("x", "y"), null, "dataset").then()
                .statusCode(201);
        as(viewer).get(collections(team.name, "fresh")).then().statusCode(200).body("collections.name",
                contains("data"));
    }

    @Test
    void concurrentUploadsToOneCollectionGetDistinctVersions() throws Exception {
        createModels();
        int writers = 6;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers);
        try {
            List<java.util.concurrent.Future<Integer>> results = new java.util.ArrayList<>();
            for (int i = 0; i < writers; i++) {
                String content = "content " + i;
                results.add(pool.submit(() -> upload(member, models, files("w", content), null, null).statusCode()));
            }
            for (java.util.concurrent.Future<Integer> result : results) {
                assertEquals(201, result.get());
            }
        } finally {
            pool.shutdown();
        }
        List<String> versions = as(viewer).get(models + "/versions").then().statusCode(200).extract()
                .path("versions.version");
        assertEquals(List.of("v5", "v4", "v3", "v2", "v1", "v0"), versions);
        as(viewer).get(models + "/versions/latest").then().body("version", equalTo("v5"));
        List<String> types = given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/entities/" + team.name + "/projects/vision/events").then().extract().path("events.type");
        assertEquals(writers, types.stream().filter("CREATE_ARTIFACT"::equals).count());
        assertEquals(writers, types.stream().filter("ADD_ARTIFACT_ALIAS"::equals).count());
    }
}

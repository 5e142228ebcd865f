package dev.fulcrum.artifacts;

import static dev.fulcrum.artifacts.ArtifactsClient.as;
import static dev.fulcrum.artifacts.ArtifactsClient.collections;
import static dev.fulcrum.artifacts.ArtifactsClient.upload;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

/**
 * Tags of collections: who writes a collection tags it (a project's members, a registry's members), everyone who reads
 * it sees its tags, and each change writes its event; unlinking a version through the REST API writes
 * {@code UNLINK_ARTIFACT}, and a registry collection's tags go with its last link.
 */
@QuarkusTest
class CollectionTagsTest extends LabTest {

    @Test
    void theProjectsMembersTagACollectionAndItsReadersSeeTheTags() {
        String collection = collections(team.name, "tags") + "/resnet";
        upload(member, collection, Map.of("w.txt", "weights"), null, "model").then().statusCode(201);

        as(viewer).put(collection + "/tags/approved").then().statusCode(403);
        as(outsider).put(collection + "/tags/approved").then().statusCode(403);
        as(null).put(collection + "/tags/approved").then().statusCode(401);
        as(member).put(collection + "/tags/approved").then().statusCode(200).body("tags", contains("approved"));
        as(member).put(collection + "/tags/approved").then().statusCode(200).body("tags", contains("approved"));
        as(member).put(collection + "/tags/baseline").then().statusCode(200).body("tags",
                contains("approved", "baseline"));
        as(member).put(collection + "/tags/a%20b").then().statusCode(422);
        as(member).put(collections(team.name, "tags") + "/missing/tags/approved").then().statusCode(404);
        as(viewer).get(collection).then().statusCode(200).body("tags", contains("approved", "baseline"));
        as(viewer).get(collections(team.name, "tags")).then().statusCode(200).body("collections[0].tags",
                contains("approved", "baseline"));

        as(viewer).delete(collection + "/tags/approved").then().statusCode(403);
        as(member).delete(collection + "/tags/approved").then().statusCode(200).body("tags", contains("baseline"));
        as(member).delete(collection + "/tags/approved").then().statusCode(404);

        String events = "/api/v1/entities/" + team.name + "/projects/tags/events";
        given().filter(Contract.EVENTS).auth().oauth2(admin.key()).get(events).then().statusCode(200)
                .body("events.type",
                        contains("REMOVE_COLLECTION_TAG", "ADD_COLLECTION_TAG", "ADD_COLLECTION_TAG",
                                "ADD_ARTIFACT_ALIAS", "CREATE_ARTIFACT"))
                .body("events[0].payload.tag", equalTo("approved"))
                .body("events[0].payload.artifact_collection_name", equalTo("resnet"))
                .body("events[0].payload.artifact_type", equalTo("model"))
                .body("events[0].author", equalTo(member.name()));
    }

    @Test
    void removingAVersionsTagWritesItsEvent() {
        String collection = collections(team.name, "untag") + "/resnet";
        upload(member, collection, Map.of("w.txt", "weights"), null, "model").then().statusCode(201);
        as(member).put(collection + "/versions/v0/tags/candidate").then().statusCode(200);
        as(member).delete(collection + "/versions/v0/tags/candidate").then().statusCode(200);
        given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/entities/" + team.name + "/projects/untag/events").then().statusCode(200)
                .body("events[0].type", equalTo("REMOVE_ARTIFACT_TAG"))
                .body("events[0].payload.tag", equalTo("candidate"))
                .body("events[0].payload.artifact_version_string", equalTo(team.name + "/untag/resnet:v0"));
    }

    @Test
    void aRegistrysMembersTagItsCollectionsWhichLoseTheirTagsWithTheirLastLink() {
        Registry registry = fixtures.registry("tagged", admin);
        Account registryViewer = fixtures.user("tagged-viewer");
        fixtures.registryMember(registry, member, Role.MEMBER);
        fixtures.registryMember(registry, registryViewer, Role.VIEWER);
        String collection = collections(team.name, "reg") + "/resnet";
        upload(member, collection, Map.of("w.txt", "weights"), null, "model").then().statusCode(201);
        String registryCollection = "/api/v1/registries/" + registry.name + "/collections/champions";

        as(member).put(registryCollection + "/tags/approved").then().statusCode(404); // no link yet: no collection
        as(member).contentType(ContentType.JSON).body(Map.of("registry", registry.name, "collection", "champions"))
                .post(collection + "/versions/v0/links").then().statusCode(201);
        as(registryViewer).put(registryCollection + "/tags/approved").then().statusCode(403);
        as(outsider).put(registryCollection + "/tags/approved").then().statusCode(403);
        as(member).put(registryCollection + "/tags/approved").then().statusCode(200).body("name", equalTo("champions"))
                .body("type", equalTo("model")).body("tags", contains("approved"));
        as(registryViewer).get("/api/v1/registries/" + registry.name + "/collections").then().statusCode(200)
                .body("collections[0].tags", contains("approved"));
        given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/registries/" + registry.name + "/events").then().statusCode(200)
                .body("events[0].type", equalTo("ADD_COLLECTION_TAG"))
                .body("events[0].payload.registry_name", equalTo(registry.name))
                .body("events[0].payload.tag", equalTo("approved"));

        as(registryViewer).delete(registryCollection + "/versions/v0").then().statusCode(403);
        as(member).delete(registryCollection + "/versions/v0").then().statusCode(204);
        as(member).delete(registryCollection + "/versions/v0").then().statusCode(404);
        given().filter(Contract.EVENTS).auth().oauth2(admin.key())
                .get("/api/v1/registries/" + registry.name + "/events").then().statusCode(200)
                .body("events[0].type", equalTo("UNLINK_ARTIFACT"))
                .body("events[0].payload.registry_version_string", equalTo(registry.name + "/champions:v0"))
                .body("events[0].payload.source_collection_name", equalTo("resnet"));
        as(registryViewer).get("/api/v1/registries/" + registry.name + "/collections").then().statusCode(200)
                .body("collections", empty());

        // linked again, the collection starts without the tags of its past
        as(member).contentType(ContentType.JSON).body(Map.of("registry", registry.name, "collection", "champions"))
                .post(collection + "/versions/v0/links").then().statusCode(201);
        as(registryViewer).get("/api/v1/registries/" + registry.name + "/collections").then().statusCode(200)
                .body("collections[0].tags", empty());
    }
}

package dev.fulcrum.wandb;

import static dev.fulcrum.wandb.WandbGraphqlTest.graphql;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The SDK's {@code collection.tags = [...]; collection.save()} documents ({@code AddArtifactCollectionTags},
 * {@code DeleteArtifactCollectionTags}, {@code UpdateArtifactSequence}, {@code ProjectArtifactCollection}) as the
 * artifacts API's collection tags, with its rights: a project's or a registry's members tag its collections.
 */
@QuarkusTest
class WandbCollectionTagsGraphqlTest {

    static final String ADD = """
            mutation AddArtifactCollectionTags($input: CreateArtifactCollectionTagAssignmentsInput!) {
              result: createArtifactCollectionTagAssignments(input: $input) { tags { __typename id name } } }""";
    static final String DELETE = """
            mutation DeleteArtifactCollectionTags($input: DeleteArtifactCollectionTagAssignmentsInput!) {
              result: deleteArtifactCollectionTagAssignments(input: $input) { success } }""";
    static final String UPDATE = """
            mutation UpdateArtifactSequence($input: UpdateArtifactSequenceInput!) {
              result: updateArtifactSequence(input: $input) { artifactCollection { __typename id name description
                type: defaultArtifactType { name } tags { edges { node { id name } } } } } }""";
    static final String READ = """
            query ProjectArtifactCollection($entity: String!, $project: String!, $type: String!, $name: String!) {
              project(entityName: $entity, name: $project) { artifactType(name: $type) {
                artifactCollection(name: $name) { __typename id name description tags { edges { node { name } } } } } } }""";

    @Inject
    Fixtures fixtures;

    private static Map<String, Object> tags(String entity, String project, String collection, String... tags) {
        return Map.of("input", Map.of("entityName", entity, "projectName", project, "artifactCollectionName",
                collection, "tags", List.of(tags).stream().map(t -> Map.of("tagName", t)).toList()));
    }

    private static Map<String, Object> update(String id, String name, String description) {
        Map<String, Object> input = new HashMap<>();
        input.put("artifactSequenceID", id);
        input.put("name", name);
        input.put("description", description);
        return Map.of("input", input);
    }

    private static void upload(Account who, String entity, String project, String collection) {
        WandbSdkTest.as(who, Contract.ARTIFACTS).contentType("multipart/form-data")
                .multiPart("file", "w.txt", "weights".getBytes(StandardCharsets.UTF_8), "text/plain")
                .multiPart("type", "model").post("/api/v1/entities/" + entity + "/projects/" + project
                        + "/artifacts/collections/" + collection + "/versions")
                .then().statusCode(201);
    }

    @Test
    void aProjectsCollectionIsTaggedAndDescribedByItsWriters() {
        Account admin = fixtures.user("gqlt");
        PlatformEntity team = fixtures.team("gqlt-team", admin);
        Account viewer = fixtures.user("gqlt-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        upload(admin, team.name, "tagging", "resnet");

        graphql(viewer, ADD, tags(team.name, "tagging", "resnet", "approved")).then().statusCode(403);
        graphql(admin, ADD, tags(team.name, "tagging", "resnet", "approved", "baseline")).then().statusCode(200)
                .body("data.result.tags.name", equalTo(List.of("approved", "baseline")));
        graphql(admin, ADD, tags(team.name, "tagging", "resnet", "a b")).then().statusCode(422);
        // a tag named twice is removed once, not missing the second time
        graphql(admin, DELETE, tags(team.name, "tagging", "resnet", "baseline", "baseline")).then().statusCode(200)
                .body("data.result.success", equalTo(true));
        graphql(admin, DELETE, tags(team.name, "tagging", "resnet", "baseline")).then().statusCode(404);

        String id = graphql(viewer, READ,
                Map.of("entity", team.name, "project", "tagging", "type", "model", "name", "resnet")).then()
                        .statusCode(200)
                        .body("data.project.artifactType.artifactCollection.tags.edges.node.name",
                                equalTo(List.of("approved")))
                        .extract().path("data.project.artifactType.artifactCollection.id");
        graphql(viewer, UPDATE, update(id, "resnet", "CNNs")).then().statusCode(403);
        graphql(admin, UPDATE, update(id, "resnet", "CNNs")).then().statusCode(200)
                .body("data.result.artifactCollection.description", equalTo("CNNs"))
                .body("data.result.artifactCollection.type.name", equalTo("model"))
                .body("data.result.artifactCollection.tags.edges.node.name", equalTo(List.of("approved")));
        graphql(admin, UPDATE, update(id, "renamed", "CNNs")).then().statusCode(422).body("errors[0].message",
                containsString("does not rename"));
        WandbSdkTest.as(viewer, Contract.ARTIFACTS)
                .get("/api/v1/entities/" + team.name + "/projects/tagging/artifacts/collections/resnet").then()
                .statusCode(200).body("description", equalTo("CNNs")).body("tags", equalTo(List.of("approved")));
    }

    @Test
    void aRegistrysCollectionIsTaggedAsTheSdkAddressesIt() {
        Account admin = fixtures.user("gqlr");
        PlatformEntity team = fixtures.team("gqlr-team", admin);
        Registry registry = fixtures.registry("gqlr-reg", admin);
        Account registryViewer = fixtures.user("gqlr-viewer");
        fixtures.registryMember(registry, registryViewer, Role.VIEWER);
        upload(admin, team.name, "shelf", "resnet");
        WandbSdkTest.as(admin, Contract.ARTIFACTS).contentType(ContentType.JSON)
                .body(Map.of("registry", registry.name, "collection", "champions")).post("/api/v1/entities/" + team.name
                        + "/projects/shelf/artifacts/collections/resnet/versions/v0/links")
                .then().statusCode(201);
        String project = "wandb-registry-" + registry.name;

        graphql(registryViewer, ADD, tags("_registries", project, "champions", "approved")).then().statusCode(403);
        graphql(admin, ADD, tags("_registries", project, "champions", "approved")).then().statusCode(200);
        graphql(admin, ADD, tags("_registries", "not-a-registry", "champions", "approved")).then().statusCode(404);
        // the collection is read with its newest version, which needs the rights on the version's project
        String id = graphql(admin, READ,
                Map.of("entity", "_registries", "project", project, "type", "model", "name", "champions")).then()
                        .statusCode(200)
                        .body("data.project.artifactType.artifactCollection.tags.edges.node.name",
                                equalTo(List.of("approved")))
                        .extract().path("data.project.artifactType.artifactCollection.id");
        graphql(admin, UPDATE, update(id, "champions", null)).then().statusCode(200)
                .body("data.result.artifactCollection.type.name", equalTo("model"));
        graphql(admin, UPDATE, update(id, "champions", "best")).then().statusCode(422);
        graphql(admin, DELETE, tags("_registries", project, "champions", "approved")).then().statusCode(200);
        WandbSdkTest.as(registryViewer, Contract.ARTIFACTS).get("/api/v1/registries/" + registry.name + "/collections")
                .then().statusCode(200).body("collections[0].tags", equalTo(List.of()));
    }
}

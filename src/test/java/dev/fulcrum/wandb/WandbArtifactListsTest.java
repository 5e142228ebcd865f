package dev.fulcrum.wandb;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The public API's artifact documents as the SDK sends them ({@code ProjectArtifacts}, {@code ProjectArtifactTypes},
 * {@code ArtifactTypeArtifactCollections}, {@code DeleteArtifact}, {@code UnlinkArtifact}): pages, rights (viewers
 * list, members delete, registry members unlink, others are refused in GraphQL's shape) and every bad input a GraphQL
 * error with its status, never a 500.
 */
@QuarkusTest
class WandbArtifactListsTest {

    static final String VERSIONS = """
            query ProjectArtifacts($entity: String!, $project: String!, $type: String!, $collection: String!,
                $cursor: String, $perPage: Int = 50, $order: String, $filters: JSONString) {
              project(entityName: $entity, name: $project) { artifactType(name: $type) {
                artifactCollection(name: $collection) { __typename
                  artifacts(after: $cursor, first: $perPage, order: $order, filters: $filters) {
                    totalCount pageInfo { endCursor hasNextPage }
                    edges { version node { id versionIndex state aliases { alias } } } } } } }
            }""";

    static final String TYPES = """
            query ProjectArtifactTypes($entity: String!, $project: String!, $cursor: String, $perPage: Int) {
              project(name: $project, entityName: $entity) { artifactTypes(after: $cursor, first: $perPage) {
                edges { node { __typename id name description createdAt } } pageInfo { endCursor hasNextPage } } }
            }""";

    static final String COLLECTIONS = """
            query ArtifactTypeArtifactCollections($entity: String!, $project: String!, $type: String!,
                $cursor: String, $perPage: Int, $filters: JSONString, $order: String) {
              project(entityName: $entity, name: $project) { artifactType(name: $type) {
                artifactCollections(after: $cursor, first: $perPage, filters: $filters, order: $order) {
                  totalCount pageInfo { endCursor hasNextPage }
                  edges { node { __typename id name description createdAt updatedAt
                    project { id internalId name entity { name } } type: defaultArtifactType { name }
                    tags { edges { node { id name } } } } } } } }
            }""";

    static final String DELETE = """
            mutation DeleteArtifact($input: DeleteArtifactInput!) {
              result: deleteArtifact(input: $input) { artifact { id } }
            }""";

    static final String UNLINK = """
            mutation UnlinkArtifact($input: UnlinkArtifactInput!) {
              result: unlinkArtifact(input: $input) { success }
            }""";

    @Inject
    Fixtures fixtures;

    private static void upload(Account account, String entity, String collection, String type, String content) {
        given().filter(Contract.ARTIFACTS).auth().oauth2(account.key()).contentType("multipart/form-data")
                .multiPart("file", "f.txt", content.getBytes(StandardCharsets.UTF_8), "application/octet-stream")
                .multiPart("type", type)
                .post("/api/v1/entities/" + entity + "/projects/p/artifacts/collections/" + collection + "/versions")
                .then().statusCode(201);
    }

    /** A team's member, a viewer of it and a stranger to it, and the member's versions v0 and v1 of {@code data}. */
    private record Readers(Account member, PlatformEntity team, Account viewer, Account stranger) {
    }

    private Readers readers() {
        Account member = fixtures.user("gql");
        PlatformEntity team = fixtures.team("gql-team", member);
        Account viewer = fixtures.user("gql-viewer");
        fixtures.member(team, viewer, Role.VIEWER);
        Account stranger = fixtures.user("gql-stranger");
        upload(member, team.name, "data", "dataset", "zero");
        upload(member, team.name, "data", "dataset", "one");
        return new Readers(member, team, viewer, stranger);
    }

    private static Map<String, Object> vars(Object... pairs) {
        Map<String, Object> vars = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            vars.put((String) pairs[i], pairs[i + 1]);
        }
        return vars;
    }

    private static String id(Account account, String entity, String name) {
        return WandbGraphqlTest.graphql(account, """
                query ArtifactMembershipByName($entity: String!, $project: String!, $name: String!) {
                  project(name: $project, entityName: $entity) { artifactCollectionMembership(name: $name) {
                    artifact { id } } }
                }""", Map.of("entity", entity, "project", "p", "name", name)).then().statusCode(200).extract()
                .path("data.project.artifactCollectionMembership.artifact.id");
    }

    @Test
    void versionsTypesAndCollectionsAreListedInPagesToReaders() {
        Readers readers = readers();
        Account member = readers.member();
        PlatformEntity team = readers.team();
        Account viewer = readers.viewer();
        Account stranger = readers.stranger();
        upload(member, team.name, "other", "dataset", "other");
        upload(member, team.name, "weights", "model", "w");
        Map<String, Object> data = vars("entity", team.name, "project", "p", "type", "dataset", "collection", "data",
                "filters", "{\"state\": \"COMMITTED\"}", "perPage", 1);

        // a viewer reads, a page at a time, newest first, with the total count
        String cursor = WandbGraphqlTest.graphql(viewer, VERSIONS, data).then().statusCode(200)
                .body("data.project.artifactType.artifactCollection.artifacts.totalCount", equalTo(2))
                .body("data.project.artifactType.artifactCollection.artifacts.edges.version", equalTo(List.of("v1")))
                .body("data.project.artifactType.artifactCollection.artifacts.edges[0].node.aliases.alias",
                        equalTo(List.of("latest")))
                .body("data.project.artifactType.artifactCollection.artifacts.pageInfo.hasNextPage", equalTo(true))
                .extract().path("data.project.artifactType.artifactCollection.artifacts.pageInfo.endCursor");
        data.put("cursor", cursor);
        WandbGraphqlTest.graphql(viewer, VERSIONS, data).then().statusCode(200)
                .body("data.project.artifactType.artifactCollection.artifacts.edges.version", equalTo(List.of("v0")))
                .body("data.project.artifactType.artifactCollection.artifacts.edges[0].node.state",
                        equalTo("COMMITTED"))
                .body("data.project.artifactType.artifactCollection.artifacts.pageInfo.hasNextPage", equalTo(false));
        data.remove("cursor");
        data.put("perPage", 10);
        data.put("order", "+versionIndex");
        WandbGraphqlTest.graphql(member, VERSIONS, data).then().statusCode(200).body(
                "data.project.artifactType.artifactCollection.artifacts.edges.version", equalTo(List.of("v0", "v1")));
        // a collection of another type, a type the project has none of: null
        data.put("type", "model");
        WandbGraphqlTest.graphql(member, VERSIONS, data).then().statusCode(200)
                .body("data.project.artifactType.artifactCollection", nullValue());
        data.put("type", "no-such-type");
        WandbGraphqlTest.graphql(member, VERSIONS, data).then().statusCode(200).body("data.project.artifactType",
                nullValue());

        WandbGraphqlTest.graphql(viewer, TYPES, vars("entity", team.name, "project", "p", "perPage", 1)).then()
                .statusCode(200).body("data.project.artifactTypes.edges.node.name", equalTo(List.of("dataset")))
                .body("data.project.artifactTypes.edges[0].node.createdAt", containsString("T"))
                .body("data.project.artifactTypes.pageInfo.hasNextPage", equalTo(true));
        WandbGraphqlTest.graphql(viewer, TYPES, vars("entity", team.name, "project", "p", "cursor", "1")).then()
                .statusCode(200).body("data.project.artifactTypes.edges.node.name", equalTo(List.of("model")));
        WandbGraphqlTest.graphql(viewer, COLLECTIONS, vars("entity", team.name, "project", "p", "type", "dataset"))
                .then().statusCode(200).body("data.project.artifactType.artifactCollections.totalCount", equalTo(2))
                .body("data.project.artifactType.artifactCollections.edges.node.name",
                        equalTo(List.of("other", "data")))
                .body("data.project.artifactType.artifactCollections.edges[0].node.type.name", equalTo("dataset"))
                .body("data.project.artifactType.artifactCollections.edges[0].node.project.entity.name",
                        equalTo(team.name))
                .body("data.project.artifactType.artifactCollections.edges[0].node.tags.edges", equalTo(List.of()));

        // the project's collections of every type (the SDK's ProjectArtifactCollections)
        WandbGraphqlTest.graphql(viewer, """
                query ProjectArtifactCollections($entity: String!, $project: String!, $cursor: String, $perPage: Int) {
                  project(entityName: $entity, name: $project) { artifactCollections(after: $cursor, first: $perPage) {
                    totalCount pageInfo { endCursor hasNextPage } edges { node { name } } } }
                }""", vars("entity", team.name, "project", "p", "perPage", 2)).then().statusCode(200)
                .body("data.project.artifactCollections.totalCount", equalTo(3))
                .body("data.project.artifactCollections.edges.node.name", equalTo(List.of("weights", "other")))
                .body("data.project.artifactCollections.pageInfo.endCursor", equalTo("2"))
                .body("data.project.artifactCollections.pageInfo.hasNextPage", equalTo(true));

        // someone who may not read the project is told so, in GraphQL's shape
        WandbGraphqlTest.graphql(stranger, VERSIONS, data).then().statusCode(403).body("errors[0].message",
                containsString("not a member"));
        WandbGraphqlTest.graphql(stranger, TYPES, vars("entity", team.name, "project", "p")).then().statusCode(403);

        // bad pages, filters and orders: 422 naming them
        data.put("type", "dataset");
        for (Map.Entry<String, Object> bad : List.<Map.Entry<String, Object>> of(
                Map.entry("filters", "{\"state\": \"PENDING\"}"), Map.entry("filters", "{\"alias\": \"x\"}"),
                Map.entry("filters", "[1]"), Map.entry("order", "-name"), Map.entry("perPage", 0),
                Map.entry("perPage", 1001), Map.entry("cursor", "x"))) {
            Map<String, Object> asked = new HashMap<>(data);
            asked.put(bad.getKey(), bad.getValue());
            WandbGraphqlTest.graphql(member, VERSIONS, asked).then().statusCode(200)
                    .body("errors[0].extensions.status", equalTo(422))
                    .body("data.project.artifactType.artifactCollection.artifacts", nullValue());
        }
        WandbGraphqlTest
                .graphql(member, COLLECTIONS,
                        vars("entity", team.name, "project", "p", "type", "dataset", "order", "-createdAt"))
                .then().statusCode(200).body("errors[0].extensions.status", equalTo(422))
                .body("errors[0].message", containsString("newest first"));
    }

    @Test
    void deletingAVersionWithAliasesNeedsDeleteAliasesAndTheMemberRole() {
        Readers readers = readers();
        Account member = readers.member();
        PlatformEntity team = readers.team();
        Account viewer = readers.viewer();
        Account stranger = readers.stranger();
        String versions = "/api/v1/entities/" + team.name + "/projects/p/artifacts/collections/data/versions";
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).put(versions + "/v0/aliases/keep").then()
                .statusCode(200);
        String v0 = id(member, team.name, "data:v0");
        String v1 = id(member, team.name, "data:v1");

        // nobody else deletes: a viewer lacks the member role, a stranger cannot see the version
        WandbGraphqlTest.graphql(viewer, DELETE, Map.of("input", Map.of("artifactID", v0, "deleteAliases", true)))
                .then().statusCode(403).body("errors[0].message", containsString("member role"));
        WandbGraphqlTest.graphql(stranger, DELETE, Map.of("input", Map.of("artifactID", v0, "deleteAliases", true)))
                .then().statusCode(404).body("errors[0].path", equalTo(List.of("result")));
        WandbGraphqlTest.graphql(member, DELETE, Map.of("input", Map.of("artifactID", "not-an-id"))).then()
                .statusCode(404);
        // aliases (latest among them) stay unless they are to go too
        WandbGraphqlTest.graphql(member, DELETE, Map.of("input", Map.of("artifactID", v0))).then().statusCode(409)
                .body("errors[0].message", containsString("has the aliases keep"))
                .body("errors[0].message", containsString("delete_aliases=True"));
        WandbGraphqlTest.graphql(member, DELETE, Map.of("input", Map.of("artifactID", v1, "deleteAliases", false)))
                .then().statusCode(409).body("errors[0].message", containsString("has the aliases latest"));
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(versions).then().statusCode(200)
                .body("versions.version", equalTo(List.of("v1", "v0")));

        WandbGraphqlTest.graphql(member, DELETE, Map.of("input", Map.of("artifactID", v1, "deleteAliases", true)))
                .then().statusCode(200).body("data.result.artifact.id", equalTo(v1));
        // latest went to the highest version left, which kept its own alias
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(versions).then().statusCode(200)
                .body("versions.version", equalTo(List.of("v0")))
                .body("versions[0].aliases", containsInAnyOrder("keep", "latest"));
        WandbGraphqlTest.graphql(member, DELETE, Map.of("input", Map.of("artifactID", v1, "deleteAliases", true)))
                .then().statusCode(404);
    }

    @Test
    void unlinkingRemovesARegistryLinkForRegistryMembersOnly() {
        Account member = fixtures.user("gql");
        PlatformEntity team = fixtures.team("gql-team", member);
        Registry registry = fixtures.registry("gql-registry", member);
        Account reader = fixtures.user("gql-reader");
        fixtures.member(team, reader, Role.VIEWER);
        fixtures.registryMember(registry, reader, Role.VIEWER);
        upload(member, team.name, "model", "model", "weights");
        String id = id(member, team.name, "model:v0");
        String registryProject = WandbRegistries.PROJECT_PREFIX + registry.name;
        String collection = WandbGraphqlTest
                .graphql(member, """
                        mutation LinkArtifact($input: LinkArtifactInput!) {
                          result: linkArtifact(input: $input) { artifactMembership { artifactCollection { id } } }
                        }""",
                        Map.of("input",
                                Map.of("artifactID", id, "artifactPortfolioName", "models", "entityName",
                                        WandbRegistries.ORG_ENTITY, "projectName", registryProject)))
                .then().statusCode(200).extract().path("data.result.artifactMembership.artifactCollection.id");
        String projectCollection = WandbNodes.opaque("ArtifactCollection", team.name + "/p/model");

        // not a registry's collection, not a collection at all, a registry viewer: refused
        WandbGraphqlTest
                .graphql(member, UNLINK,
                        Map.of("input", Map.of("artifactID", id, "artifactPortfolioID", projectCollection)))
                .then().statusCode(422).body("errors[0].message", containsString("deleteArtifact"));
        WandbGraphqlTest.graphql(member, UNLINK, Map.of("input", Map.of("artifactID", id, "artifactPortfolioID", "x")))
                .then().statusCode(422).body("errors[0].message", containsString("artifact collection"));
        WandbGraphqlTest
                .graphql(reader, UNLINK, Map.of("input", Map.of("artifactID", id, "artifactPortfolioID", collection)))
                .then().statusCode(403).body("errors[0].message", containsString("member role on registry"));
        String linked = "/api/v1/registries/" + registry.name + "/collections/models/versions";
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(linked).then().statusCode(200)
                .body("versions.version", equalTo(List.of("v0")));

        WandbGraphqlTest
                .graphql(member, UNLINK, Map.of("input", Map.of("artifactID", id, "artifactPortfolioID", collection)))
                .then().statusCode(200).body("data.result.success", equalTo(true));
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(linked).then().statusCode(404);
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + team.name + "/projects/p/artifacts/collections/model/versions/v0").then()
                .statusCode(200);
        // not linked there any more: 404
        WandbGraphqlTest
                .graphql(member, UNLINK, Map.of("input", Map.of("artifactID", id, "artifactPortfolioID", collection)))
                .then().statusCode(404).body("errors[0].message", containsString("not linked"));
        // a registry's collections are listed by the registries REST API
        WandbGraphqlTest.graphql(member, TYPES, vars("entity", WandbRegistries.ORG_ENTITY, "project", registryProject))
                .then().statusCode(200).body("errors[0].extensions.status", equalTo(422))
                .body("errors[0].message", containsString("registries REST API"));
    }

    @Test
    void aProjectAnswersAVersionByNameWithItsTypeOrNull() {
        Account member = fixtures.user("gql");
        PlatformEntity team = fixtures.team("gql-team", member);
        upload(member, team.name, "typed", "dataset", "one");
        String query = """
                query ArtifactType($entity: String, $project: String, $name: String!) {
                  project(name: $project, entityName: $entity) { artifact(name: $name) { id artifactType { name } } }
                }""";
        JsonPath latest = WandbGraphqlTest
                .graphql(member, query, Map.of("entity", team.name, "project", "p", "name", "typed:latest")).then()
                .statusCode(200).extract().jsonPath();
        assertEquals("dataset", latest.getString("data.project.artifact.artifactType.name"));
        assertEquals(id(member, team.name, "typed:v0"), latest.getString("data.project.artifact.id"));
        for (String absent : List.of("typed:v7", "untyped:latest", "untyped")) {
            WandbGraphqlTest.graphql(member, query, Map.of("entity", team.name, "project", "p", "name", absent)).then()
                    .statusCode(200).body("data.project.artifact", nullValue());
        }
        Account stranger = fixtures.user("gql-stranger");
        WandbGraphqlTest.graphql(stranger, query, Map.of("entity", team.name, "project", "p", "name", "typed:latest"))
                .then().statusCode(403).body("errors[0].message", containsString("not a member"));
    }
}

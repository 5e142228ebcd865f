package dev.fulcrum.wandb;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The W&B protocol's GraphQL API ({@code openapi/wandb.graphql}) as the SDK sends its documents: the viewer, server
 * features, runs created, changed and resumed with {@code UpsertBucket} and {@code RunResumeStatus}, authorized as the
 * runs API is, and errors in GraphQL's shape. Every response is checked against {@code openapi/wandb.yaml}.
 */
@QuarkusTest
class WandbGraphqlTest {

    static final String DEFAULT_ENTITY = "query DefaultEntity { viewer { username defaultEntity { name } } }";

    static final String UPSERT_BUCKET = """
            mutation UpsertBucket($id: String, $name: String, $project: String, $entity: String, $displayName: String,
                $notes: String, $config: JSONString, $state: String, $tags: [String!], $summaryMetrics: JSONString) {
              upsertBucket(input: {id: $id, name: $name, modelName: $project, entityName: $entity,
                  displayName: $displayName, notes: $notes, config: $config, state: $state, tags: $tags,
                  summaryMetrics: $summaryMetrics}) {
                bucket { id name displayName description config sweepName
                  project { id name entity { id name } } historyLineCount }
                inserted
              }
            }""";

    static final String RESUME_STATUS = """
            query RunResumeStatus($project: String, $entity: String, $name: String!) {
              model(name: $project, entityName: $entity) {
                id name entity { id name }
                bucket(name: $name, missingOk: true) {
                  id name summaryMetrics displayName logLineCount historyLineCount eventsLineCount historyTail
                  eventsTail config tags notes wandbConfig(keys: ["t"])
                }
              }
            }""";

    @Inject
    Fixtures fixtures;

    static RequestSpecification as(Account account) {
        return given().filter(Contract.of("wandb")).auth().preemptive().basic("api", account.key())
                .contentType(ContentType.JSON);
    }

    static Response graphql(Account account, String query, Map<String, Object> variables) {
        return as(account).body(Map.of("query", query, "variables", variables)).post("/graphql");
    }

    @Test
    void theViewerAndServerFeaturesAreAnswered() {
        Account member = fixtures.user("gql");
        as(member).body(Map.of("query", """
                # the Weave SDK's query, with any spacing
                query DefaultEntity {
                    viewer { username, defaultEntity { name } }
                }""", "variables", Map.of())).post("/graphql").then().statusCode(200)
                .body("data.viewer.username", equalTo(member.name()))
                .body("data.viewer.defaultEntity.name", equalTo(member.name()));
        PlatformEntity team = fixtures.team("gql-team", member);
        graphql(member, "query Viewer { viewer { id entity username email flags teams { edges { node { name } } } } }",
                Map.of()).then().statusCode(200).body("data.viewer.entity", equalTo(member.name()))
                        .body("data.viewer.flags", equalTo("{}"))
                        .body("data.viewer.teams.edges.node.name", hasItem(team.name));
        graphql(member, "query ServerFeaturesQuery { serverInfo { features { name isEnabled } } }", Map.of()).then()
                .statusCode(200)
                .body("data.serverInfo.features.name",
                        equalTo(List.of("QUERY_AUTOMATIONS_ON_ENTITY", "AUTOMATION_EVENT_RUN_METRIC",
                                "AUTOMATION_EVENT_RUN_METRIC_CHANGE", "AUTOMATION_EVENT_RUN_METRIC_ZSCORE",
                                "AUTOMATION_EVENT_RUN_STATE", "AUTOMATION_EVENT_ADD_ARTIFACT_TAG",
                                "AUTOMATION_EVENT_REMOVE_ARTIFACT_TAG", "AUTOMATION_EVENT_ADD_COLLECTION_TAG",
                                "AUTOMATION_EVENT_REMOVE_COLLECTION_TAG", "AUTOMATION_EVENT_UNLINK_ARTIFACT")))
                .body("data.serverInfo.features.isEnabled", everyItem(equalTo(true)));
    }

    @Test
    void unservedDocumentsAreGraphqlErrorsNamingWhatIsMissing() {
        Account member = fixtures.user("gql");
        graphql(member, "query { viewer { id photoUrl } }", Map.of()).then().statusCode(400).body("errors[0].message",
                containsString("'photoUrl'"));
        graphql(member, "mutation DeleteRun($id: ID!) { deleteRun(input: {id: $id}) { success } }", Map.of("id", "x"))
                .then().statusCode(400).body("errors[0].message", containsString("'deleteRun'"));
        as(member).body(Map.of("query", DEFAULT_ENTITY, "operationName", "Other")).post("/graphql").then()
                .statusCode(400).body("errors[0].message", containsString("Other"));
        graphql(member, "query {", Map.of()).then().statusCode(400).body("errors[0].message",
                containsString("Invalid"));
        given().filter(Contract.of("wandb")).auth().preemptive().basic("api", "not-a-key").contentType(ContentType.JSON)
                .body(Map.of("query", DEFAULT_ENTITY)).post("/graphql").then().statusCode(401)
                .body("errors[0].message", containsString("key"));
        // a document over 1 MiB is refused from its Content-Length, before it is read, in GraphQL's shape
        graphql(member, "#" + "x".repeat(1 << 20) + "\n" + DEFAULT_ENTITY, Map.of()).then().statusCode(413)
                .body("errors[0].message", containsString("at most 1048576 bytes"));
    }

    static final String LINK = """
            mutation LinkArtifact($input: LinkArtifactInput!) {
              result: linkArtifact(input: $input) { versionIndex
                artifactMembership { versionIndex aliases { alias }
                  artifactCollection { name project { internalId name entity { name } } } artifact { id } } }
            }""";

    @Test
    void everyEntityAnswersTheServersOrganizationAndLinksGoIntoRegistriesOnly() {
        Account member = fixtures.user("gql");
        PlatformEntity team = fixtures.team("gql-team", member);
        dev.fulcrum.accounts.Registry registry = fixtures.registry("gql-registry", member);
        String orgInfo = """
                query FetchOrgInfoFromEntity($entity: String!) {
                  entity(name: $entity) { organization { name orgEntity { name } }
                    user { organizations { name orgEntity { name } } } }
                }""";
        graphql(member, orgInfo, Map.of("entity", team.name)).then().statusCode(200)
                .body("data.entity.organization.name", equalTo(WandbRegistries.ORGANIZATION))
                .body("data.entity.organization.orgEntity.name", equalTo(WandbRegistries.ORG_ENTITY))
                .body("data.entity.user", nullValue());
        graphql(member, orgInfo, Map.of("entity", member.name())).then().statusCode(200)
                .body("data.entity.organization.name", equalTo(WandbRegistries.ORGANIZATION))
                .body("data.entity.user.organizations[0].orgEntity.name", equalTo(WandbRegistries.ORG_ENTITY));

        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "w.bin", "weights".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "application/octet-stream")
                .multiPart("type", "model")
                .post("/api/v1/entities/" + team.name + "/projects/p/artifacts/collections/model/versions").then()
                .statusCode(201);
        String id = graphql(member, """
                query ArtifactMembershipByName($entity: String!, $project: String!, $name: String!) {
                  project(name: $project, entityName: $entity) { artifactCollectionMembership(name: $name) {
                    artifact { id } } }
                }""", Map.of("entity", team.name, "project", "p", "name", "model:v0")).then().statusCode(200).extract()
                .path("data.project.artifactCollectionMembership.artifact.id");
        String registryProject = WandbRegistries.PROJECT_PREFIX + registry.name;

        // into a project's collection, by collection id, a bad collection name, an unknown registry: refused
        graphql(member, LINK,
                Map.of("input",
                        Map.of("artifactID", id, "artifactPortfolioName", "c", "entityName", team.name, "projectName",
                                "p"))).then().statusCode(422).body("errors[0].message",
                                        containsString("registries only"));
        graphql(member, LINK,
                Map.of("input",
                        Map.of("artifactID", id, "artifactPortfolioID", "x", "entityName", WandbRegistries.ORG_ENTITY,
                                "projectName", registryProject))).then().statusCode(422).body("errors[0].message",
                                        containsString("artifactPortfolioName"));
        graphql(member, LINK,
                Map.of("input",
                        Map.of("artifactID", id, "artifactPortfolioName", "bad name", "entityName",
                                WandbRegistries.ORG_ENTITY, "projectName", registryProject))).then().statusCode(422)
                                        .body("errors[0].message", containsString("collection name"));
        graphql(member, LINK,
                Map.of("input",
                        Map.of("artifactID", id, "artifactPortfolioName", "c", "entityName", WandbRegistries.ORG_ENTITY,
                                "projectName", WandbRegistries.PROJECT_PREFIX + "no-such-registry"))).then()
                                        .statusCode(404).body("errors[0].message", containsString("no-such-registry"));

        // linked: the membership is the registry collection's; linking again answers the same link
        for (int i = 0; i < 2; i++) {
            graphql(member, LINK,
                    Map.of("input", Map.of("artifactID", id, "artifactPortfolioName", "c", "entityName",
                            WandbRegistries.ORG_ENTITY, "projectName", registryProject, "aliases",
                            List.of(Map.of("artifactCollectionName", "c", "alias", "best"),
                                    Map.of("artifactCollectionName", "other", "alias", "ignored"))))).then()
                                            .statusCode(200).body("data.result.versionIndex",
                                                    equalTo(0))
                                            .body("data.result.artifactMembership.aliases.alias",
                                                    containsInAnyOrder("best", "latest"))
                                            .body("data.result.artifactMembership.artifactCollection.name",
                                                    equalTo("c"))
                                            .body("data.result.artifactMembership.artifactCollection.project.name",
                                                    equalTo(registryProject))
                                            .body("data.result.artifactMembership.artifactCollection.project.entity.name",
                                                    equalTo(WandbRegistries.ORG_ENTITY))
                                            .body("data.result.artifactMembership.artifact.id", equalTo(id));
        }
    }

    @Test
    void upsertBucketCreatesAndChangesTheRunOfTheRunsApi() {
        Account member = fixtures.user("gql");
        PlatformEntity team = fixtures.team("gql-team", member);
        Account viewer = fixtures.user("gql-viewer");
        fixtures.member(team, viewer, Role.VIEWER);

        // before the first write the project does not exist: null, not an error
        graphql(member, RESUME_STATUS, Map.of("project", "proj", "entity", team.name, "name", "r1")).then()
                .statusCode(200).body("data.model", nullValue());
        // a viewer may not write, and the SDK is told so (403, not retried)
        graphql(viewer, UPSERT_BUCKET, Map.of("name", "r1", "project", "proj", "entity", team.name)).then()
                .statusCode(403).body("errors[0].message", containsString("member role"))
                .body("errors[0].path", equalTo(List.of("upsertBucket")));

        String config = "{\"lr\": {\"value\": 0.1, \"desc\": null}, \"_wandb\": {\"value\": {\"t\": {\"1\": [5]}}}}";
        JsonPath created = graphql(member, UPSERT_BUCKET,
                Map.of("name", "r1", "project", "proj", "entity", team.name, "config", config, "tags",
                        List.of("x", "y"), "notes", "first")).then().statusCode(200)
                                .body("data.upsertBucket.inserted", equalTo(true))
                                .body("data.upsertBucket.bucket.name", equalTo("r1"))
                                .body("data.upsertBucket.bucket.project.name", equalTo("proj"))
                                .body("data.upsertBucket.bucket.project.entity.name", equalTo(team.name))
                                .body("data.upsertBucket.bucket.historyLineCount", equalTo(0)).extract().jsonPath();
        JsonPath config1 = JsonPath.from(created.getString("data.upsertBucket.bucket.config"));
        assertEquals(0.1f, config1.getFloat("lr.value"));

        // the same run through the runs API: config unwrapped, created by the member
        given().filter(Contract.RUNS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + team.name + "/projects/proj/runs/r1").then().statusCode(200)
                .body("config.lr", equalTo(0.1f)).body("created_by", equalTo(member.name()))
                .body("state", equalTo("running"));

        // by its storage id: display name, state and summary changed, not inserted again
        String id = created.getString("data.upsertBucket.bucket.id");
        graphql(member, UPSERT_BUCKET,
                Map.of("id", id, "displayName", "Run One", "state", "killed", "summaryMetrics", "{\"best\": 3}")).then()
                        .statusCode(200).body("data.upsertBucket.inserted", equalTo(false))
                        .body("data.upsertBucket.bucket.displayName", equalTo("Run One"));
        given().filter(Contract.RUNS).auth().oauth2(member.key())
                .get("/api/v1/entities/" + team.name + "/projects/proj/runs/r1/states").then().statusCode(200)
                .body("changes.state", equalTo(List.of("running", "killed")));

        // what the SDK reads to resume, a viewer may read
        JsonPath status = graphql(viewer, RESUME_STATUS, Map.of("project", "proj", "entity", team.name, "name", "r1"))
                .then().statusCode(200).body("data.model.name", equalTo("proj"))
                .body("data.model.bucket.tags", equalTo(List.of("x", "y")))
                .body("data.model.bucket.notes", equalTo("first")).body("data.model.bucket.historyTail", equalTo("[]"))
                .body("data.model.bucket.eventsLineCount", equalTo(0))
                .body("data.model.bucket.wandbConfig", equalTo("{\"t\":{\"1\":[5]}}")).extract().jsonPath();
        assertEquals(3, JsonPath.from(status.getString("data.model.bucket.summaryMetrics")).getInt("best"));
        graphql(viewer, RESUME_STATUS, Map.of("project", "proj", "entity", team.name, "name", "absent")).then()
                .statusCode(200).body("data.model.bucket", nullValue());
        graphql(member, RESUME_STATUS, Map.of("project", "proj", "entity", "no-such-entity", "name", "r1")).then()
                .statusCode(404).body("errors[0].message", containsString("no-such-entity"));
    }

    @Test
    void theFileStreamLogsTheRunsHistorySummaryOutputAndEnd() {
        Account member = fixtures.user("fs");
        String entity = member.name();
        graphql(member, UPSERT_BUCKET, Map.of("name", "fs1", "project", "fsp")).then().statusCode(200);
        String stream = "/files/" + entity + "/fsp/fs1/file_stream";
        as(member)
                .body(Map.of("files",
                        Map.of("wandb-history.jsonl",
                                Map.of("offset", 0, "content",
                                        List.of("{\"_step\": 0, \"loss\": 0.5, \"img\": {\"_type\": \"image-file\"}}",
                                                "{\"_step\": 1, \"loss\": 0.25, \"acc\": NaN}")),
                                "wandb-summary.json",
                                Map.of("offset", 0, "content", List.of("{\"loss\": 0.25, \"_step\": 1}")), "output.log",
                                Map.of("offset", 0, "content", List.of("hello", "world")), "wandb-events.jsonl",
                                Map.of("offset", 0, "content", List.of("{\"system.cpu\": 3.5}")))))
                .post(stream).then().statusCode(200).body("limits", equalTo(Map.of()));
        // a retried request: lines below the stored count are not stored again
        as(member).body(Map.of("files",
                Map.of("wandb-history.jsonl",
                        Map.of("offset", 1, "content",
                                List.of("{\"_step\": 1, \"loss\": 0.25}", "{\"_step\": 2, \"loss\": 0.125}")),
                        "output.log", Map.of("offset", 1, "content", List.of("world!"))),
                "complete", true, "exitcode", 0)).post(stream).then().statusCode(200);

        String run = "/api/v1/entities/" + entity + "/projects/fsp/runs/fs1";
        given().filter(Contract.RUNS).auth().oauth2(member.key()).get(run + "/history").then().statusCode(200)
                .body("rows.loss", equalTo(List.of(0.5f, 0.25f, 0.125f))).body("rows[1].acc", nullValue())
                .body("rows[0].img", nullValue());
        given().filter(Contract.RUNS).auth().oauth2(member.key()).get(run).then().statusCode(200)
                .body("state", equalTo("finished")).body("history_rows", equalTo(3));
        graphql(member, RESUME_STATUS, Map.of("project", "fsp", "name", "fs1")).then().statusCode(200)
                .body("data.model.bucket.logLineCount", equalTo(2))
                .body("data.model.bucket.eventsLineCount", equalTo(1))
                .body("data.model.bucket.eventsTail", containsString("system.cpu"))
                .body("data.model.bucket.historyLineCount", equalTo(3));

        // the SDK's run queries read the same run
        graphql(member,
                "query RunState($entity: String!, $project: String!, $run: String!) {"
                        + " project(name: $project, entityName: $entity) { run(name: $run) { id state } } }",
                Map.of("entity", entity, "project", "fsp", "run", "fs1")).then().statusCode(200)
                        .body("data.project.run.state", equalTo("finished"));
        graphql(member, "query QueryRunInfo($entity: String!, $project: String!, $run: String!) {"
                + " project(name: $project, entityName: $entity) { run(name: $run) { displayName summaryMetrics } } }",
                Map.of("entity", entity, "project", "fsp", "run", "fs1")).then().statusCode(200)
                        .body("data.project.run.summaryMetrics", containsString("\"loss\":0.125"));

        Account stranger = fixtures.user("fs-other");
        as(stranger).body(Map.of("files", Map.of())).post(stream).then().statusCode(403).body("errors[0].message",
                containsString(entity));
        as(member).body(Map.of("files", Map.of())).post("/files/" + entity + "/fsp/absent/file_stream").then()
                .statusCode(404).body("errors[0].message", containsString("absent"));
    }

    @Test
    void theSdksTelemetryIsAcceptedWithoutCredentialsAndDropped() {
        given().filter(Contract.of("wandb")).contentType("application/x-protobuf").body(new byte[] { 10, 0 })
                .post("/sdk/otel/v1/metrics").then().statusCode(200);
        given().filter(Contract.of("wandb")).contentType("application/x-protobuf").body(new byte[] { 10, 0 })
                .post("/sdk/otel/v1/logs").then().statusCode(200);
    }
}

package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PrometheusText;
import dev.fulcrum.support.PythonClients;

/**
 * Lineage with the official {@code wandb} SDK, unchanged ({@code src/test/python/wandb_sdk/lineage_e2e.py}): which run
 * logged and which runs used a version, read back through {@code logged_artifacts()}, {@code used_artifacts()},
 * {@code logged_by()} and {@code used_by()}; then the rights (a reader of the version's project never sees a run of a
 * project it may not read; strangers and viewers are refused) and the cascades of a deleted run and collection.
 */
@QuarkusTest
class WandbLineageSdkTest {

    static final String SCRIPT = "wandb_sdk/lineage_e2e.py";

    static final String USED_BY = """
            query ArtifactUsedBy($id: ID!) { artifact(id: $id) { usedBy { edges { node { __typename id name
              project { name entity { name } } } } } } }""";

    static final String CREATED_BY = """
            query ArtifactCreatedBy($id: ID!) { artifact(id: $id) { createdBy { __typename ... on Run { name } } } }""";

    static final String INPUTS = """
            query RunInputArtifacts($entity: String!, $project: String!, $run: String!, $cursor: String, $perPage: Int) {
              project(entityName: $entity, name: $project) { run(name: $run) {
                artifacts: inputArtifacts(after: $cursor, first: $perPage) { totalCount pageInfo { endCursor hasNextPage }
                  edges { node { id versionIndex artifactSequence { name } } } } } } }""";

    static final String USE = """
            mutation UseArtifact($input: UseArtifactInput!) { useArtifact(input: $input) { artifact { id } } }""";

    @Inject
    Fixtures fixtures;

    @Inject
    DataSource dataSource;

    @TestHTTPResource("/")
    URI base;

    @Test
    void runsLogAndUseVersionsAndTheSdkReadsItBackWithinTheReadersRights() throws Exception {
        Account admin = fixtures.user("lineage");
        PlatformEntity team = fixtures.team("lineage-team", admin);
        Account reader = fixtures.user("lineage-reader");
        fixtures.member(team, reader, Role.VIEWER);
        Account stranger = fixtures.user("lineage-stranger");
        String project = "lineage";
        String otherProject = "lineage-outside";
        Map<String, String> env = WandbSdkTest.sdkEnv(base, admin, team.name, project);
        env.put("OTHER_ENTITY", admin.name());
        env.put("OTHER_PROJECT", otherProject);

        double refusedBefore = refusedDocuments();
        String output = PythonClients.run(SCRIPT, Duration.ofMinutes(5), env);
        // every document the SDK sent while logging, using and reading versions was served (none answered 400)
        assertEquals(refusedBefore, refusedDocuments(), "GraphQL documents of the SDK answered 400");
        Matcher result = Pattern.compile("RESULT (\\{.*})").matcher(output);
        assertTrue(result.find(), output);
        JsonPath read = JsonPath.from(result.group(1));
        String producer = read.getString("producer");
        String consumer = read.getString("consumer");
        String outsider = read.getString("outsider");
        String data = read.getString("data");

        // cross-checked through the REST API: the runs and the versions are the runs and artifacts stores'
        String runs = "/api/v1/entities/" + team.name + "/projects/" + project + "/runs/";
        WandbSdkTest.as(admin, Contract.RUNS).get(runs + producer).then().statusCode(200).body("state",
                equalTo("finished"));
        String collections = "/api/v1/entities/" + team.name + "/projects/" + project + "/artifacts/collections/";
        WandbSdkTest.as(admin, Contract.ARTIFACTS).get(collections + "data/versions/v0").then().statusCode(200);

        // a reader of the version's project sees the runs of that project only
        WandbGraphqlTest.graphql(reader, USED_BY, Map.of("id", data)).then().statusCode(200).body("errors", nullValue())
                .body("data.artifact.usedBy.edges.node.name", contains(consumer))
                .body("data.artifact.usedBy.edges[0].node.__typename", equalTo("Run"));
        WandbGraphqlTest.graphql(admin, USED_BY, Map.of("id", data)).then().statusCode(200)
                .body("data.artifact.usedBy.edges.node.name", contains(consumer, outsider));
        WandbGraphqlTest.graphql(reader, CREATED_BY, Map.of("id", data)).then().statusCode(200)
                .body("data.artifact.createdBy.name", equalTo(producer))
                .body("data.artifact.createdBy.__typename", equalTo("Run"));
        // a stranger reads nothing: no version, and no run's inputs
        WandbGraphqlTest.graphql(stranger, USED_BY, Map.of("id", data)).then().statusCode(200).body("data.artifact",
                nullValue());
        WandbGraphqlTest.graphql(stranger, INPUTS, Map.of("entity", team.name, "project", project, "run", consumer))
                .then().statusCode(anyOf(equalTo(403), equalTo(404)))
                .body("errors[0].extensions.status", anyOf(equalTo(403), equalTo(404)));
        // the outsider's inputs, as its owner reads them, in pages; a bad cursor or page size is a 422
        Map<String, Object> vars = new HashMap<>(
                Map.of("entity", admin.name(), "project", otherProject, "run", outsider, "perPage", 1));
        WandbGraphqlTest.graphql(admin, INPUTS, vars).then().statusCode(200)
                .body("data.project.run.artifacts.totalCount", equalTo(2))
                .body("data.project.run.artifacts.pageInfo.hasNextPage", equalTo(true))
                .body("data.project.run.artifacts.edges.node.artifactSequence.name", contains("data"));
        vars.put("cursor", "1");
        WandbGraphqlTest.graphql(admin, INPUTS, vars).then().statusCode(200)
                .body("data.project.run.artifacts.pageInfo.hasNextPage", equalTo(false))
                .body("data.project.run.artifacts.edges.node.artifactSequence.name", contains("model"));
        // errors under a partial answer (the project is there): HTTP 200, the error's own status 422
        vars.put("cursor", "not-a-cursor");
        WandbGraphqlTest.graphql(admin, INPUTS, vars).then().statusCode(200)
                .body("errors[0].extensions.status", equalTo(422))
                .body("errors[0].message", containsString("Not a cursor"));
        vars.put("cursor", null);
        vars.put("perPage", 0);
        WandbGraphqlTest.graphql(admin, INPUTS, vars).then().statusCode(200).body("errors[0].extensions.status",
                equalTo(422));

        // recording a use is a write on the run's project: a viewer is refused, an unknown run is a 404
        WandbGraphqlTest
                .graphql(reader, USE,
                        Map.of("input",
                                Map.of("entityName", team.name, "projectName", project, "runName", consumer,
                                        "artifactID", data)))
                .then().statusCode(403).body("errors[0].extensions.status", equalTo(403));
        WandbGraphqlTest
                .graphql(admin, USE,
                        Map.of("input",
                                Map.of("entityName", team.name, "projectName", project, "runName", "no-such-run",
                                        "artifactID", data)))
                .then().statusCode(404).body("errors[0].extensions.status", equalTo(404));

        // a deleted run leaves the version's users; a deleted collection leaves the run's inputs
        try (Connection connection = dataSource.getConnection();
                PreparedStatement delete = connection.prepareStatement(
                        "delete from runs where name = ? and project_id = (select p.id from projects p"
                                + " join entity_names e on e.entity_id = p.entity_id where e.name = ? and p.name = ?)")) {
            delete.setString(1, consumer);
            delete.setString(2, team.name);
            delete.setString(3, project);
            assertTrue(delete.executeUpdate() == 1);
        }
        WandbGraphqlTest.graphql(admin, USED_BY, Map.of("id", data)).then().statusCode(200)
                .body("data.artifact.usedBy.edges.node.name", contains(outsider));
        WandbSdkTest.as(admin, Contract.ARTIFACTS).delete(collections + "data").then().statusCode(204);
        vars.put("perPage", 10);
        WandbGraphqlTest.graphql(admin, INPUTS, vars).then().statusCode(200)
                .body("data.project.run.artifacts.totalCount", equalTo(1))
                .body("data.project.run.artifacts.edges.node.artifactSequence.name", contains("model"));
        try (Connection connection = dataSource.getConnection();
                PreparedStatement left = connection.prepareStatement(
                        "select count(*) from wandb_artifact_lineage l join runs r on r.id = l.run_id where r.name = ?")) {
            left.setString(1, outsider);
            try (var rows = left.executeQuery()) {
                rows.next();
                assertTrue(rows.getInt(1) == 1, "the deleted version's row is gone");
            }
        }
        WandbGraphqlTest.graphql(admin, CREATED_BY, Map.of("id", data)).then().statusCode(200).body("data.artifact",
                nullValue());
    }

    /** How many GraphQL documents this server has refused as not valid against its schema (answered 400). */
    static double refusedDocuments() {
        return PrometheusText.fetch().sum("http_server_requests_seconds_count",
                Map.of("uri", "/graphql", "status", "400"));
    }
}

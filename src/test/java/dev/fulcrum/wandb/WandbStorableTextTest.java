package dev.fulcrum.wandb;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Text PostgreSQL cannot store (the NUL character, an unpaired surrogate) is refused through every door of the W&B
 * protocol as a GraphQL error, never a 500: string literals of a document (arguments, input objects), variables, JSON
 * text inside strings (a run's config, an artifact's metadata, run filters) and the file stream's lines.
 */
@QuarkusTest
class WandbStorableTextTest {

    @Inject
    Fixtures fixtures;

    @Test
    void aStringLiteralThatCannotBeStoredIsAGraphqlErrorAndNothingRuns() {
        Account member = fixtures.user("nulgql");
        for (String literal : List.of("a\\u0000", "a\\ud800", "\\udc00")) {
            for (String document : List.of("{ entity(name: \"" + literal + "\") { name } }",
                    "{ project(name: \"" + literal + "\", entityName: \"" + member.name() + "\") { name } }",
                    "{ model(name: \"p\", entityName: \"" + literal + "\") { name } }",
                    "mutation { createArtifact(input: {entityName: \"" + member.name() + "\", projectName: \"p\","
                            + " artifactTypeName: \"model\", artifactCollectionName: \"c\", digest: \"d\","
                            + " description: \"" + literal + "\"}) { artifact { id } } }",
                    "mutation { upsertBucket(input: {name: \"r\", modelName: \"p\", tags: [\"" + literal
                            + "\"]}) { inserted } }")) {
                // graphql-java's parser refuses an unpaired surrogate itself (a syntax error), a NUL is refused after
                WandbGraphqlTest.graphql(member, document, Map.of()).then().statusCode(400).body("data", nullValue())
                        .body("errors[0].message",
                                containsString(literal.contains("0000") ? "Strings may not" : "surrogate"))
                        .body("errors[0].locations[0].line", equalTo(1));
            }
        }
    }

    @Test
    void variablesAndJsonTextInsideStringsThatCannotBeStoredAreRefused() {
        Account member = fixtures.user("nulvar");
        // a variable: JSON of the request body
        WandbGraphqlTest.graphql(member, WandbGraphqlTest.UPSERT_BUCKET, Map.of("name", "r\u0000", "project", "p"))
                .then().statusCode(422).body("errors[0].message", containsString("NUL"));
        WandbGraphqlTest.as(member)
                .body("{\"query\": \"" + "query Q($e: String!) { entity(name: $e) { name } }"
                        + "\", \"variables\": {\"e\": \"a\\ud800\"}}")
                .post("/graphql").then().statusCode(422).body("errors[0].message", containsString("surrogate"));
        // JSON text inside a string: escaped in it, the character appears only once it is read
        WandbGraphqlTest
                .graphql(member, WandbGraphqlTest.UPSERT_BUCKET,
                        Map.of("name", "r1", "project", "p", "config", "{\"lr\": {\"value\": \"a\\u0000\"}}"))
                .then().statusCode(422).body("errors[0].message", containsString("NUL"));
        WandbGraphqlTest
                .graphql(member, WandbGraphqlTest.UPSERT_BUCKET,
                        Map.of("name", "r1", "project", "p", "summaryMetrics", "{\"a\\ud800\": 1}"))
                .then().statusCode(422).body("errors[0].message", containsString("surrogate"));
        WandbGraphqlTest.graphql(member, WandbGraphqlTest.UPSERT_BUCKET, Map.of("name", "r1", "project", "p")).then()
                .statusCode(200);
        WandbGraphqlTest.graphql(member,
                "query Runs($entity: String!, $filters: JSONString) { project(name: \"p\", entityName: $entity) {"
                        + " runs(filters: $filters) { edges { node { name } } } } }",
                Map.of("entity", member.name(), "filters", "{\"display_name\": \"a\\u0000\"}")).then()
                .body("errors[0].message", containsString("NUL")).body("errors[0].extensions.status", equalTo(422));
    }

    @Test
    void theFileStreamRefusesLinesThatCannotBeStored() {
        Account member = fixtures.user("nulfs");
        WandbGraphqlTest.graphql(member, WandbGraphqlTest.UPSERT_BUCKET, Map.of("name", "fs", "project", "p")).then()
                .statusCode(200);
        String stream = "/files/" + member.name() + "/p/fs/file_stream";
        for (Map<String, Object> files : List.<Map<String, Object>> of(
                Map.of("wandb-history.jsonl",
                        Map.of("offset", 0, "content", List.of("{\"loss\": 1, \"n\": \"\\u0000\"}"))),
                Map.of("wandb-summary.json", Map.of("offset", 0, "content", List.of("{\"k\": \"\\ud800\"}"))),
                Map.of("wandb-events.jsonl", Map.of("offset", 0, "content", List.of("{\"a\\u0000\": 1}"))),
                Map.of("output.log", Map.of("offset", 0, "content", List.of("line\u0000"))))) {
            WandbGraphqlTest.as(member).body(Map.of("files", files)).post(stream).then().statusCode(422)
                    .body("errors[0].message", containsString("Strings may not"));
        }
        WandbGraphqlTest.as(member).body("{\"files\": {\"output.log\": {\"offset\": 0, \"content\": [null]}}}")
                .post(stream).then().statusCode(422).body("errors[0].message", containsString("content"));
        WandbGraphqlTest.as(member).body(Map.of("files",
                Map.of("wandb-history.jsonl",
                        Map.of("offset", 0, "content", List.of("{\"loss\": 1, \"emoji\": \"\\ud83d\\ude00\"}")))))
                .post(stream).then().statusCode(200);
    }
}

package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.asBasic;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.http.Header;
import io.restassured.response.ExtractableResponse;
import io.restassured.response.Response;

import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;

/**
 * The dataset read reuses an answer per API key and path while no access change has arrived; every change it depends on
 * through this replica must show in the very next read, and a change written to the database directly (as another
 * replica would) as soon as its notification arrives, within milliseconds.
 */
@QuarkusTest
class DatasetReadCacheTest extends LabTest {

    @Inject
    ApiKeys apiKeys;

    @Inject
    EntityManager em;

    private String project;
    private String first;

    @BeforeEach
    void dataset() {
        project = team.name + "/reads";
        first = DatasetsClient.create(admin.key(), project, "set", rows(2, "first")).then().statusCode(200).extract()
                .path("digest");
        readTwice(viewer.key(), "latest", first);
    }

    /** Reads twice: the first answer is kept, the second is the kept one; both must be {@code digest}. */
    private void readTwice(String key, String selector, String digest) {
        for (int i = 0; i < 2; i++) {
            as(key).get(path(selector)).then().statusCode(200).body("digest", equalTo(digest));
        }
    }

    private String path(String selector) {
        return "/v2/" + project + "/datasets/set/versions/" + selector;
    }

    @Test
    void aRememberedAnswerIsTheResourceMethodsAnswer() {
        // the first read is the resource method's; the second, remembered, is written ahead of JAX-RS; the third, with
        // an Accept that route leaves alone, is the resource method's again, from the cache
        String path = path(first);
        List<ExtractableResponse<Response>> answers = List.of(as(admin.key()).get(path).then().extract(),
                as(admin.key()).get(path).then().extract(),
                asBasic(admin.key()).accept("application/json;q=0.9").get(path).then().extract());
        for (ExtractableResponse<Response> answer : answers) {
            assertEquals(200, answer.statusCode());
            assertEquals(headers(answers.get(0)), headers(answer));
            assertArrayEquals(answers.get(0).asByteArray(), answer.asByteArray());
        }
    }

    private static Map<String, String> headers(ExtractableResponse<Response> answer) {
        Map<String, String> headers = new TreeMap<>();
        for (Header header : answer.headers()) {
            headers.merge(header.getName().toLowerCase(), header.getValue(), (a, b) -> a + ", " + b);
        }
        return headers;
    }

    @Test
    void aNewVersionMovesLatestAndOlderSelectorsStay() {
        readTwice(viewer.key(), "v0", first);
        String second = DatasetsClient.create(admin.key(), project, "set", rows(3, "second")).then().statusCode(200)
                .extract().path("digest");
        assertNotEquals(first, second);
        readTwice(viewer.key(), "latest", second);
        readTwice(viewer.key(), "v0", first);
        readTwice(viewer.key(), "v1", second);
        readTwice(viewer.key(), first, first);
    }

    @Test
    void aDeletedVersionIsGoneAtOnce() {
        readTwice(viewer.key(), first, first);
        as(admin.key()).delete("/v2/" + project + "/datasets/set?digests=" + first).then().statusCode(200)
                .body("num_deleted", equalTo(1));
        as(viewer.key()).get(path(first)).then().statusCode(404);
        as(viewer.key()).get(path("latest")).then().statusCode(404);
    }

    @Test
    void aRemovedMemberIsRefusedAtOnce() {
        given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key())
                .delete("/api/v1/teams/" + team.name + "/members/" + viewer.name()).then().statusCode(204);
        as(viewer.key()).get(path("latest")).then().statusCode(403);
    }

    @Test
    void aRemovedMemberIsRefusedAtOnceEveryTime() {
        // the very next request after the answer to the change, many times over: a window between the change and the
        // moment the cached decisions are dropped would show as a 200 in one of them
        for (int round = 0; round < 20; round++) {
            given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key())
                    .delete("/api/v1/teams/" + team.name + "/members/" + viewer.name()).then().statusCode(204);
            as(viewer.key()).get(path("latest")).then().statusCode(403);
            given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                    .body(Map.of("role", "viewer")).put("/api/v1/teams/" + team.name + "/members/" + viewer.name())
                    .then().statusCode(200);
            readTwice(viewer.key(), "latest", first);
        }
    }

    @Test
    void aRevokedKeyIsRefusedAtOnce() {
        apiKeys.revoke(viewer.user().id, apiKeys.list(viewer.user().id).get(0).id);
        as(viewer.key()).get(path("latest")).then().statusCode(401);
    }

    /** The read's status once it is no longer {@code status}: the change arrives by notification, not at once. */
    private int statusOnceNot(int status) {
        return await("the change pushed to this replica").atMost(Duration.ofSeconds(5))
                .until(() -> as(viewer.key()).get(path("latest")).statusCode(), s -> s != status);
    }

    @Test
    void aChangeWrittenByAnotherReplicaShowsWhenItsNotificationArrives() {
        // no code of this replica runs for the change: only the database knows of it, and notifies every replica
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("""
                update dataset_versions set deleted_at = now()
                where object_id = 'set' and project_id = (select p.id from projects p join entities e
                    on e.id = p.entity_id where e.name = ?1 and p.name = 'reads')""").setParameter(1, team.name)
                .executeUpdate());
        assertEquals(404, statusOnceNot(200));
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("""
                update dataset_versions set deleted_at = null
                where object_id = 'set' and project_id = (select p.id from projects p join entities e
                    on e.id = p.entity_id where e.name = ?1 and p.name = 'reads')""").setParameter(1, team.name)
                .executeUpdate());
        assertEquals(200, statusOnceNot(404));
        readTwice(viewer.key(), "latest", first);
        QuarkusTransaction.requiringNew()
                .run(() -> em.createNativeQuery("delete from entity_members where user_id = ?1")
                        .setParameter(1, viewer.user().id).executeUpdate());
        assertEquals(403, statusOnceNot(200));
    }

    @Test
    void anAnswerIsOnlyGivenToTheKeyItWasAuthorizedFor() {
        as(outsider.key()).get(path("latest")).then().statusCode(403);
        readTwice(admin.key(), "latest", first);
        as(outsider.key()).get(path("latest")).then().statusCode(403);
    }
}

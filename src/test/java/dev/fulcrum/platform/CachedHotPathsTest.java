package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.accounts.AccessChanges;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;
import dev.fulcrum.support.RequestConnections;

/**
 * A chat completion of a known key and project, a repeated dataset read and the model list make no database round trip:
 * what they need is decided from memory, dropped when access changes (accounts' AccessChanges). The first request of
 * each is checked against the database, and is counted, so the counting itself is shown to work.
 */
@QuarkusTest
class CachedHotPathsTest extends LabTest {

    private static final int REQUESTS = 50;

    @Inject
    RequestConnections connections;

    @Inject
    AccessChanges changes;

    private String datasetPath;

    private void models(String key) {
        given().filter(Contract.INFERENCE).auth().oauth2(key).get("/v1/models").then().statusCode(200);
    }

    private void read(String key) {
        given().filter(Contract.DATASETS).auth().oauth2(key).get(datasetPath).then().statusCode(200);
    }

    private void chat(String key, String project) {
        var request = given().filter(Contract.INFERENCE).auth().oauth2(key).contentType(ContentType.JSON);
        if (project != null) {
            request = request.header("Compat-Project", project);
        }
        request.body(Map.of("model", "fulcrum-tiny", "messages", List.of(Map.of("role", "user", "content", "Hi")),
                "max_tokens", 1, "seed", 1)).post("/v1/chat/completions").then().statusCode(200);
    }

    private void everyPath(String key) {
        models(key);
        read(key);
        chat(key, team.name + "/hot");
        chat(key, null);
    }

    @Test
    void cachedRequestsMakeNoDatabaseRoundTrip() {
        datasetPath = "/v2/" + team.name + "/hot/datasets/"
                + given().filter(Contract.DATASETS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                        .body(Map.of("name", "set", "rows", List.of(Map.of("q", "2+2", "a", 4))))
                        .post("/v2/" + team.name + "/hot/datasets").then().statusCode(200).extract().path("object_id")
                + "/versions/latest";

        connections.start();
        everyPath(member.key()); // first requests of this key: checked against the database
        List<String> first = connections.stop();
        assertFalse(first.isEmpty(), "the first requests take connections, and the hook sees them");

        // A commit made before (the dataset, the fixtures' users and keys) is announced to the listener of every
        // replica, this one too; on a loaded machine that notification may arrive after the first requests and drop,
        // rightly, what they cached. So the rounds are repeated until one takes place with no change arriving: its
        // requests must then make no round trip at all.
        AtomicInteger rounds = new AtomicInteger();
        AtomicReference<List<String>> cached = new AtomicReference<>();
        await("a round of cached requests with no access change arriving").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200)).until(() -> {
                    rounds.incrementAndGet();
                    long stamp = changes.stamp();
                    everyPath(member.key()); // caches again what a late notification dropped
                    connections.start();
                    for (int i = 0; i < REQUESTS; i++) {
                        everyPath(member.key());
                    }
                    cached.set(connections.stop());
                    return changes.unchanged(stamp);
                });
        System.out.printf("database connections taken by requests: %d for the first of each path, %d for the next %d"
                + " of each (round %d)%n", first.size(), cached.get().size(), REQUESTS, rounds.get());
        assertEquals(List.of(), cached.get(), "connections taken by cached requests while no access change arrived");
    }
}

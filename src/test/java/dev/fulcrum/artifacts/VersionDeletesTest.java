package dev.fulcrum.artifacts;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.ProjectVersion;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * {@link VersionWrites#deleteVersion(long, boolean)}, the W&B SDK's {@code artifact.delete()}: a version that gets an
 * alias while the delete waits is not deleted with it unasked (the aliases are read with the collection locked).
 */
@QuarkusTest
class VersionDeletesTest {

    @Inject
    Fixtures fixtures;

    @Inject
    ArtifactVersions versions;

    @Inject
    VersionWrites writes;

    @Inject
    ArtifactLabels labels;

    @Test
    void anAliasGivenWhileTheDeleteWaitsKeepsTheVersion() throws Exception {
        Account member = fixtures.user("del");
        PlatformEntity team = fixtures.team("del-team", member);
        String collection = "/api/v1/entities/" + team.name + "/projects/p/artifacts/collections/data/versions";
        for (String content : new String[] { "zero", "one" }) {
            given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                    .multiPart("file", "f.txt", content.getBytes(StandardCharsets.UTF_8), "application/octet-stream")
                    .multiPart("type", "dataset").post(collection).then().statusCode(201);
        }
        long v0 = fixtures.asCaller(member, () -> versions.getVersion(team.name, "p", "data", "v0").id());

        // a writer gives v0 an alias and holds the collection's lock a while; the delete starts meanwhile
        CountDownLatch locked = new CountDownLatch(1);
        CompletableFuture<Void> alias = CompletableFuture
                .runAsync(() -> fixtures.asCaller(member, () -> QuarkusTransaction.requiringNew().call(() -> {
                    labels.add(new ProjectVersion(team.name, "p", "data", "v0"), Label.ALIAS, "hold");
                    locked.countDown();
                    Thread.sleep(1500);
                    return null;
                })));
        locked.await(10, TimeUnit.SECONDS);
        ApiException refused = assertThrows(ApiException.class,
                () -> fixtures.asCaller(member, () -> writes.deleteVersion(v0, false)));
        alias.get(10, TimeUnit.SECONDS);

        assertEquals(ApiException.Kind.CONFLICT, refused.kind(), refused.getMessage());
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(collection + "/v0").then().statusCode(200)
                .body("aliases", containsInAnyOrder("hold"));
        // asked to, it goes with its alias
        fixtures.asCaller(member, () -> writes.deleteVersion(v0, true));
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).get(collection + "/hold").then().statusCode(404);
    }
}

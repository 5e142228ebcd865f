package dev.fulcrum.artifacts;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * Drafts (the W&B SDK's, here) never committed are swept once older than the configured age (24 hours unless
 * configured); younger drafts and committed ones, however old, stay.
 */
@QuarkusTest
class ArtifactDraftSweeperTest {

    @Inject
    Fixtures fixtures;

    @Inject
    ArtifactDraftSweeper sweeper;

    @Inject
    EntityManager em;

    @Test
    void uncommittedDraftsOlderThanTheAgeGoAndTheRestStays() {
        assertEquals(Duration.ofHours(24), sweeper.maxAge());
        Account member = fixtures.user("sweep");
        PlatformEntity team = fixtures.team("sweep-team", member);
        given().filter(Contract.ARTIFACTS).auth().oauth2(member.key()).contentType("multipart/form-data")
                .multiPart("file", "w.bin", "weights".getBytes(StandardCharsets.UTF_8), "application/octet-stream")
                .multiPart("type", "model")
                .post("/api/v1/entities/" + team.name + "/projects/p/artifacts/collections/model/versions").then()
                .statusCode(201);
        long[] ids = QuarkusTransaction.requiringNew().call(() -> {
            Object[] found = (Object[]) em.createNativeQuery("""
                    select p.id, v.id from projects p join artifact_collections c on c.project_id = p.id
                    join artifact_versions v on v.collection_id = c.id where p.entity_id = ?1""")
                    .setParameter(1, team.id).getSingleResult();
            long project = ((Number) found[0]).longValue();
            long version = ((Number) found[1]).longValue();
            long oldDraft = draft(project, null, "25 hours");
            em.createNativeQuery("insert into artifact_draft_files (draft_id, name, md5) values (?1, 'a', 'x')")
                    .setParameter(1, oldDraft).executeUpdate();
            return new long[] { oldDraft, draft(project, null, "23 hours"), draft(project, version, "30 days") };
        });

        sweeper.sweep(sweeper.maxAge());

        QuarkusTransaction.requiringNew().run(() -> {
            List<?> left = em.createNativeQuery("select id from artifact_drafts where id in (?1, ?2, ?3) order by id")
                    .setParameter(1, ids[0]).setParameter(2, ids[1]).setParameter(3, ids[2]).getResultList();
            assertEquals(List.of(ids[1], ids[2]), left.stream().map(id -> ((Number) id).longValue()).toList());
            assertEquals(0L,
                    ((Number) em.createNativeQuery("select count(*) from artifact_draft_files where draft_id = ?1")
                            .setParameter(1, ids[0]).getSingleResult()).longValue());
        });

        // a shorter age takes the younger draft too; the committed one stays
        sweeper.sweep(Duration.ofHours(1));
        QuarkusTransaction.requiringNew()
                .run(() -> assertEquals(List.of(ids[2]),
                        em.createNativeQuery("select id from artifact_drafts where id in (?1, ?2, ?3)")
                                .setParameter(1, ids[0]).setParameter(2, ids[1]).setParameter(3, ids[2]).getResultList()
                                .stream().map(id -> ((Number) id).longValue()).toList()));
    }

    private long draft(long project, Long version, String age) {
        return ((Number) em.createNativeQuery("insert into artifact_drafts"
                + " (project_id, collection, type, version_id, created_at) values (?1, 'model', 'model', nullif(?2, 0),"
                + " now() - cast(?3 as interval)) returning id").setParameter(1, project)
                .setParameter(2, version == null ? 0L : version).setParameter(3, age).getSingleResult()).longValue();
    }
}

package dev.fulcrum.wandb;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The W&B door's one place for SQL: lineage rows (table {@code wandb_artifact_lineage}, the door's only table).
 * {@code WandbTranslatesTest} fails on SQL in any other class of the package.
 */
@ApplicationScoped
class WandbLineageStatements {

    /**
     * A page of the run's lineage rows of a kind whose version the caller (parameter 3) may read, and how many there
     * are: one row with a null version when the page is empty.
     */
    private static final String READABLE_PAGE = """
            with readable as (
                select l.version_id, l.at from wandb_artifact_lineage l
                join artifact_version_projects v on v.version_id = l.version_id
                join project_names p on p.project_id = v.project_id
                join effective_roles r on r.entity_id = p.entity_id and r.user_id = ?3
                where l.run_id = ?1 and l.kind = ?2)
            select page.version_id, total.n from (select count(*) as n from readable) total
            left join lateral (select version_id, at from readable order by at, version_id limit ?4 offset ?5) page
            on true order by page.at, page.version_id""";

    /** A version of the page (null: the page is empty) and how many versions are readable in all. */
    record Counted(Long versionId, long total) {
    }

    @Inject
    EntityManager em;

    /** Keeps that the run logged or used the version (once). */
    void keep(long versionId, long runId, String kind) {
        NativeSql.update(em, "insert into wandb_artifact_lineage (version_id, run_id, kind) values (?1, ?2, ?3)"
                + " on conflict do nothing", versionId, runId, kind);
    }

    /** The runs that logged or used the version, oldest first. */
    List<Long> runsOf(long versionId, String kind) {
        return NativeSql.list(em,
                "select run_id from wandb_artifact_lineage where version_id = ?1 and kind = ?2 order by at, run_id",
                row -> row.longValue(0), versionId, kind);
    }

    /** A page of the run's versions of a kind that the user may read, with their count (see READABLE_PAGE). */
    List<Counted> readablePage(long runId, String kind, Long userId, int first, int offset) {
        return NativeSql.list(em, READABLE_PAGE, row -> new Counted(row.longValue(0), row.longValue(1)), runId, kind,
                userId, first, offset);
    }
}

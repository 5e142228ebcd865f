package dev.fulcrum.training;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The rows executors and workers write again and again. Native SQL because PostgreSQL's {@code insert ... on conflict}
 * writes a row that concurrent requests (or replicas) may write at the same moment in one statement, without the race
 * of a read followed by an insert.
 */
@ApplicationScoped
class WorkerStatements {

    @Inject
    EntityManager em;

    /** Registers an external worker, or updates the base models of a worker registered under the same name. */
    @Transactional
    void register(String id, String name, List<String> baseModels, long createdBy) {
        NativeSql.update(em, """
                insert into training_workers (id, kind, name, base_models, created_by)
                values (?1, 'gpu', ?2, cast(?3 as text[]), ?4)
                on conflict (id) do update set base_models = excluded.base_models, last_seen = now()""", id, name,
                NativeSql.textArray(baseModels), createdBy);
    }

    /** Records that an executor or worker asked for work now. */
    @Transactional
    void seen(String id, String kind, String name) {
        NativeSql.update(em, """
                insert into training_workers (id, kind, name, base_models, last_seen)
                values (?1, ?2, ?3, '{}', now())
                on conflict (id) do update set last_seen = now()""", id, kind, name);
    }

    /** Records a checkpoint file of a job attempt; uploading a path again replaces it. */
    @Transactional
    void file(String jobId, int attempt, String path, String digest, long size) {
        NativeSql.update(em, """
                insert into training_job_files (job_id, attempt, path, digest, size) values (?1, ?2, ?3, ?4, ?5)
                on conflict (job_id, attempt, path) do update set digest = excluded.digest, size = excluded.size""",
                jobId, attempt, path, digest, size);
    }
}

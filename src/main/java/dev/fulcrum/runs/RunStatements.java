package dev.fulcrum.runs;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.NativeSql;

/**
 * The run writes PostgreSQL does in one statement each: an insert that tells a taken name apart without a race
 * ({@code on conflict do nothing}), a batch of history rows from arrays ({@code unnest}) and the merge of the last
 * values into the jsonb summary ({@code ||}). Logging is measured (bench/metrics.sh), so it stays at these statements.
 */
@ApplicationScoped
class RunStatements {

    @Inject
    EntityManager em;

    /** Inserts a run; false when the project has a run of that name. */
    boolean insert(long projectId, String name, String displayName, String config, long createdBy) {
        return NativeSql.update(em, """
                insert into runs (project_id, name, display_name, config, created_by)
                values (?1, ?2, ?3, cast(?4 as jsonb), ?5) on conflict (project_id, name) do nothing""", projectId,
                name, NativeSql.typed(displayName, String.class), config, createdBy) == 1;
    }

    /** Appends history rows (JSON object texts) numbered from {@code firstSeq}, one statement for the batch. */
    void insertHistory(long runId, long firstSeq, List<Long> steps, List<String> rows) {
        NativeSql.update(em, """
                insert into run_history (run_id, seq, step, val)
                select ?1, ?2 + t.n - 1, cast(t.st as bigint), cast(t.v as jsonb)
                from unnest(cast(?3 as text[]), cast(?4 as text[])) with ordinality as t(st, v, n)""", runId, firstSeq,
                NativeSql.textArray(steps.stream().map(String::valueOf).toList()), NativeSql.textArray(rows));
    }

    /** Merges the last values into the summary and moves the last step and the history row count on. */
    void mergeSummary(long runId, String last, long lastStep, int rows) {
        NativeSql.update(em, """
                update runs set summary = summary || cast(?1 as jsonb), last_step = ?2, row_count = row_count + ?3,
                updated_at = now() where id = ?4""", last, lastStep, rows, runId);
    }
}

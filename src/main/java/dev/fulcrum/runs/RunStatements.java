package dev.fulcrum.runs;

import java.time.OffsetDateTime;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The run SQL PostgreSQL does in one statement each: an insert that tells a taken name apart without a race
 * ({@code on conflict do nothing}), and logging a batch, the measured hot path (bench/metrics.sh): the locked read of
 * the run's counters (without loading the entity), then the history rows from arrays ({@code unnest}) together with the
 * merge of the last values into the jsonb summary ({@code ||}). The W&B door writes and reads a run's summary, output
 * and system metrics through the public ones, after checking the caller's rights on the run.
 */
@ApplicationScoped
public class RunStatements {

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    /**
     * What a run keeps besides its history: console output lines and system-metrics lines (counts, and the last
     * system-metrics line) and the last history row (null when none).
     */
    public record Tails(long outputLines, long systemMetricsLines, String lastSystemMetrics,
            ObjectNode lastHistoryRow) {
    }

    /** Inserts a run; false when the project has a run of that name. */
    boolean insert(long projectId, String name, String displayName, String config, long createdBy) {
        return NativeSql.update(em, """
                insert into runs (project_id, name, display_name, config, created_by)
                values (?1, ?2, ?3, cast(?4 as jsonb), ?5) on conflict (project_id, name) do nothing""", projectId,
                name, NativeSql.typed(displayName, String.class), config, createdBy) == 1;
    }

    /** The run a batch is logged to, locked until the transaction ends, with its creator's username. */
    record Locked(long id, String name, String creator, long lastStep, long historyRows, String displayName) {
    }

    /** Locks the run for logging a batch (so concurrent batches get distinct, ordered sequence numbers). */
    Optional<Locked> lockForLog(long projectId, String name) {
        return NativeSql.first(em,
                """
                        select r.id, r.name, (select u.username from account_names u where u.user_id = r.created_by), r.last_step,
                               r.row_count, r.display_name
                        from runs r where r.project_id = ?1 and r.name = ?2 for no key update""",
                row -> new Locked(row.longValue(0), row.string(1), row.string(2), row.longValue(3), row.longValue(4),
                        row.string(5)),
                projectId, name);
    }

    /**
     * Appends history rows (JSON object texts) numbered from {@code firstSeq}, merges the last values into the summary
     * and moves the last step and the history row count on: one statement for the batch.
     */
    void append(long runId, long firstSeq, Long[] steps, String[] rows, String last, long lastStep) {
        NativeSql.update(em, """
                with history as (
                    insert into run_history (run_id, seq, step, val)
                    select ?1, ?2 + t.n - 1, t.st, cast(t.v as jsonb)
                    from unnest(cast(?3 as bigint[]), cast(?4 as text[])) with ordinality as t(st, v, n))
                update runs set summary = summary || cast(?5 as jsonb), last_step = ?6, row_count = row_count + ?7,
                updated_at = now() where id = ?1""", runId, firstSeq, steps, rows, last, lastStep, rows.length);
    }

    /** Replaces the run's summary (a JSON object text). The caller's rights on the run are checked already. */
    public void replaceSummary(long runId, String summary) {
        NativeSql.update(em, "update runs set summary = cast(?2 as jsonb), updated_at = now() where id = ?1", runId,
                summary);
    }

    /**
     * Stores console lines from line {@code first} on, replacing the lines stored at those numbers (rights checked).
     */
    public void writeOutput(long runId, int first, String[] lines) {
        NativeSql.update(em, """
                insert into run_output (run_id, line, content)
                select ?1, ?2 + t.n - 1, t.c from unnest(cast(?3 as text[])) with ordinality as t(c, n)
                on conflict (run_id, line) do update set content = excluded.content""", runId, first, lines);
    }

    /** Appends system-metrics lines numbered from {@code first}, keeping lines stored there (rights checked). */
    public void appendSystemMetrics(long runId, int first, String[] lines) {
        NativeSql.update(em, """
                insert into run_system_metrics (run_id, line, val)
                select ?1, ?2 + t.n - 1, cast(t.v as jsonb) from unnest(cast(?3 as text[])) with ordinality as t(v, n)
                on conflict (run_id, line) do nothing""", runId, first, lines);
    }

    /**
     * The numbers of output and system-metrics lines (one past the highest line stored), the last metrics line and the
     * last history row (rights checked).
     */
    public Tails tails(long runId) {
        return NativeSql.first(em, """
                select (select coalesce(max(line) + 1, 0) from run_output where run_id = ?1),
                       (select coalesce(max(line) + 1, 0) from run_system_metrics where run_id = ?1),
                       (select cast(val as text) from run_system_metrics where run_id = ?1 order by line desc limit 1),
                       (select cast(val as text) from run_history where run_id = ?1 order by seq desc limit 1)""",
                row -> new Tails(row.longValue(0), row.longValue(1), row.string(2),
                        row.string(3) == null ? null : storedJson.readObject(row.string(3))),
                runId).orElseThrow();
    }

    /** Asks the run to stop, if it is running and was not asked before. */
    void requestStop(long runId) {
        NativeSql.update(em, "update runs set stop_requested_at = now() where id = ?1 and state = 'running'"
                + " and stop_requested_at is null", runId);
    }

    /** When a stop of the run was asked, or null. */
    OffsetDateTime stopRequestedAt(long runId) {
        return NativeSql.first(em, "select stop_requested_at from runs where id = ?1", row -> row.time(0), runId)
                .orElse(null);
    }

    /** How many history rows hold each key (rights checked). */
    public Map<String, Long> historyKeys(long runId) {
        Map<String, Long> keys = new TreeMap<>();
        NativeSql.list(em, """
                select k, count(*) from run_history h, jsonb_object_keys(h.val) k where h.run_id = ?1 group by k""",
                row -> keys.put(row.string(0), row.longValue(1)), runId);
        return keys;
    }
}

package dev.fulcrum.runs;

import java.util.List;
import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.runs.RunFiles.RunFile;
import dev.fulcrum.runs.RunFiles.RunRef;

/**
 * The SQL of a run's files ({@link RunFiles}): the rows of {@code run_files}, and {@code output.log} read from the
 * run's console lines ({@code run_output}).
 */
final class RunFileStatements {

    private RunFileStatements() {
    }

    /** The id of the project's run of that name. */
    static Optional<Long> runId(EntityManager em, long projectId, String run) {
        return NativeSql.first(em, "select id from runs where project_id = ?1 and name = ?2", row -> row.longValue(0),
                projectId, run);
    }

    /** A run by id with the names of its entity and project. */
    static Optional<RunRef> run(EntityManager em, long runId) {
        return NativeSql.first(em, """
                select e.name, p.name, r.name from runs r join project_names p on p.project_id = r.project_id
                join entity_names e on e.entity_id = p.entity_id where r.id = ?1""",
                row -> new RunRef(runId, row.string(0), row.string(1), row.string(2)), runId);
    }

    /** Stores the file of that name, replacing the one stored. */
    static void record(EntityManager em, long runId, String name, BlobChecksums.Checked checked, String contentType) {
        NativeSql.update(em, """
                insert into run_files (run_id, name, blob, size, md5, content_type) values (?1, ?2, ?3, ?4, ?5, ?6)
                on conflict (run_id, name) do update set blob = excluded.blob, size = excluded.size, md5 = excluded.md5,
                content_type = excluded.content_type, updated_at = now()""", runId, name, checked.blob().digest(),
                checked.blob().size(), checked.md5(), contentType);
    }

    /** The run's stored files of those names (all when none), by name. */
    static List<RunFile> list(EntityManager em, long runId, List<String> wanted) {
        return NativeSql.list(em, """
                select name, size, blob, md5, content_type, updated_at from run_files where run_id = ?1
                and (cardinality(cast(?2 as text[])) = 0 or name = any(cast(?2 as text[]))) order by name""",
                RunFileStatements::file, runId, NativeSql.textArray(wanted));
    }

    /** The run's stored file of that name. */
    static Optional<RunFile> file(EntityManager em, long runId, String name) {
        return NativeSql.first(em,
                "select name, size, blob, md5, content_type, updated_at from run_files where run_id = ?1"
                        + " and name = ?2",
                RunFileStatements::file, runId, name);
    }

    /** The run's console lines in order, each ended by a newline. */
    static StringBuilder outputText(EntityManager em, long runId) {
        StringBuilder text = new StringBuilder();
        NativeSql.list(em, "select content from run_output where run_id = ?1 order by line",
                row -> text.append(row.string(0)).append('\n'), runId);
        return text;
    }

    /** The run's console lines as {@code output.log} (its digest not computed); empty when it has none. */
    static Optional<RunFile> output(EntityManager em, long runId, String name, String contentType) {
        return NativeSql
                .first(em,
                        """
                                select count(*), coalesce(sum(octet_length(o.content) + 1), 0), (select updated_at from runs where id = ?1)
                                from run_output o where o.run_id = ?1""",
                        row -> row.longValue(0) == 0 ? null
                                : new RunFile(name, row.longValue(1), null, null, contentType, row.time(2)),
                        runId)
                .filter(f -> f != null);
    }

    private static RunFile file(NativeSql.Row row) {
        return new RunFile(row.string(0), row.longValue(1), row.string(2).strip(), row.string(3), row.string(4),
                row.time(5));
    }
}

package dev.fulcrum.runs;

import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.JsonInput;
import dev.fulcrum.platform.json.StoredJson;

/**
 * What a run keeps besides its history rows, as the W&B SDK writes and reads it (the W&B door calls this service): the
 * whole summary, console output and system-metrics lines, and the counts and last lines of those and the last history
 * row. Members write, viewers read; the statements are {@link RunStatements}'.
 */
@ApplicationScoped
public class RunStreams {

    @Inject
    RunFiles runFiles;

    @Inject
    RunStatements statements;

    @Inject
    StoredJson storedJson;

    /**
     * A run's console output and system-metrics lines (counts, and the last system-metrics line, null when none) and
     * its last history row (null when none).
     */
    public record Tails(long outputLines, long systemMetricsLines, String lastSystemMetrics,
            ObjectNode lastHistoryRow) {
    }

    /** Replaces the run's summary (its numbers must be finite). Needs the member role. */
    @Transactional
    public void replaceSummary(String entity, String project, String run, ObjectNode summary) {
        if (!JsonInput.isFinite(summary)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "summary"));
        }
        statements.replaceSummary(runId(entity, project, run, Role.MEMBER), storedJson.write(summary));
    }

    /** Stores console output lines from line {@code first} on, replacing lines stored there. Needs the member role. */
    @Transactional
    public void writeOutput(String entity, String project, String run, int first, List<String> lines) {
        statements.writeOutput(runId(entity, project, run, Role.MEMBER), first, lines.toArray(String[]::new));
    }

    /**
     * Appends system-metrics lines (JSON objects) numbered from {@code first}; lines already stored at those numbers (a
     * retried request's) are kept. Needs the member role.
     */
    @Transactional
    public void appendSystemMetrics(String entity, String project, String run, int first, List<ObjectNode> lines) {
        statements.appendSystemMetrics(runId(entity, project, run, Role.MEMBER), first,
                lines.stream().map(storedJson::write).toArray(String[]::new));
    }

    /** The run's output and system-metrics counts and last lines, and its last history row. Needs the viewer role. */
    @Transactional
    public Tails tails(String entity, String project, String run) {
        RunStatements.Tails tails = statements.tails(runId(entity, project, run, Role.VIEWER));
        return new Tails(tails.outputLines(), tails.systemMetricsLines(), tails.lastSystemMetrics(),
                tails.lastHistoryRow());
    }

    /** How many history rows hold each key, by key. Needs the viewer role. */
    @Transactional
    public Map<String, Long> historyKeys(String entity, String project, String run) {
        return statements.historyKeys(runId(entity, project, run, Role.VIEWER));
    }

    private long runId(String entity, String project, String run, Role role) {
        return runFiles.run(entity, project, run, role).id();
    }
}

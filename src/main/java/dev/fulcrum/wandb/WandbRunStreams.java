package dev.fulcrum.wandb;

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
import dev.fulcrum.runs.RunFiles;
import dev.fulcrum.runs.RunStatements;
import dev.fulcrum.runs.RunStatements.Tails;

/**
 * What a run keeps besides its history rows, as only the W&B SDK writes and reads it: the summary, console output and
 * system metrics its file stream sends, and the counts and last lines GraphQL answers. Members write, viewers read; the
 * statements are the runs package's.
 */
@ApplicationScoped
class WandbRunStreams {

    @Inject
    RunFiles runFiles;

    @Inject
    RunStatements statements;

    @Inject
    StoredJson storedJson;

    /** Replaces the run's summary (the W&B SDK sends the whole summary). Needs the member role. */
    @Transactional
    void replaceSummary(String entity, String project, String run, ObjectNode summary) {
        if (!JsonInput.isFinite(summary)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "summary"));
        }
        statements.replaceSummary(runId(entity, project, run, Role.MEMBER), storedJson.write(summary));
    }

    /** Stores console output lines from line {@code first} on, replacing lines stored there. Needs the member role. */
    @Transactional
    void writeOutput(String entity, String project, String run, int first, List<String> lines) {
        statements.writeOutput(runId(entity, project, run, Role.MEMBER), first, lines.toArray(String[]::new));
    }

    /**
     * Appends system-metrics lines (JSON objects) numbered from {@code first}; lines already stored at those numbers (a
     * retried request's) are kept. Needs the member role.
     */
    @Transactional
    void appendSystemMetrics(String entity, String project, String run, int first, List<ObjectNode> lines) {
        statements.appendSystemMetrics(runId(entity, project, run, Role.MEMBER), first,
                lines.stream().map(storedJson::write).toArray(String[]::new));
    }

    /** The run's output and system-metrics counts and last lines, and its last history row. Needs the viewer role. */
    @Transactional
    Tails tails(String entity, String project, String run) {
        return statements.tails(runId(entity, project, run, Role.VIEWER));
    }

    /** How many history rows hold each key, by key. Needs the viewer role. */
    @Transactional
    Map<String, Long> historyKeys(String entity, String project, String run) {
        return statements.historyKeys(runId(entity, project, run, Role.VIEWER));
    }

    private long runId(String entity, String project, String run, Role role) {
        return runFiles.run(entity, project, run, role).id();
    }
}

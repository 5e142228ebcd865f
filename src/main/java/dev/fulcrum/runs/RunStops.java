package dev.fulcrum.runs;

import java.time.OffsetDateTime;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.runs.RunService.RunView;

/**
 * Requests to stop a run (column {@code runs.stop_requested_at}, owned here). A member of the run's project asks (the
 * runs API, the console, the W&B SDK's {@code run.stop()}); the process logging the run learns it from the answers of
 * its file stream, stops, and its run then ends as {@code killed}, whatever its exit code. Asking again, or for a run
 * that is not running, changes nothing.
 */
@ApplicationScoped
public class RunStops {

    /** A run and when its stop was asked (null: never). */
    public record Stop(RunView run, OffsetDateTime requestedAt) {
    }

    @Inject
    Access access;

    @Inject
    RunService runs;

    @Inject
    RunStatements statements;

    /** Asks the run to stop (member role; viewers 403, unknown run 404). */
    @Transactional
    public Stop request(String entity, String project, String run) {
        access.project(entity, project, Role.MEMBER);
        RunView view = runs.get(entity, project, run);
        statements.requestStop(view.id());
        return new Stop(view, requestedAt(view.id()));
    }

    /** When a stop of the run was asked, or null (read rights on the run). */
    @Transactional
    public OffsetDateTime requested(String entity, String project, String run) {
        return requestedAt(runs.get(entity, project, run).id());
    }

    /** Whether a stop of the run (by its store id, the caller's rights already checked) was asked. */
    @Transactional
    public boolean asked(long runId) {
        return requestedAt(runId) != null;
    }

    /** The state a run ends in: {@code killed} once its stop was asked, else {@code finished} for 0, {@code failed}. */
    @Transactional
    public String endState(long runId, int exitCode) {
        return asked(runId) ? "killed" : exitCode == 0 ? "finished" : "failed";
    }

    private OffsetDateTime requestedAt(long runId) {
        return statements.stopRequestedAt(runId);
    }
}

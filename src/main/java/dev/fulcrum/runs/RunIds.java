package dev.fulcrum.runs;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.runs.RunService.RunView;

/** Runs found by their store id ({@link RunView#id()}), for other packages that keep that id beside their own rows. */
@ApplicationScoped
public class RunIds {

    @Inject
    RunFiles files;

    @Inject
    RunService runs;

    /** The run, when it exists and the caller may read it; empty otherwise (never telling the two apart). */
    @Transactional
    public Optional<RunView> readable(long runId) {
        try {
            RunFiles.RunRef run = files.signedRun(runId);
            return Optional.of(runs.get(run.entity(), run.project(), run.name()));
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.FORBIDDEN || e.kind() == ApiException.Kind.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }
}

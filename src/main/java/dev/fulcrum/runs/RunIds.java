package dev.fulcrum.runs;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.NativeSql;
import dev.fulcrum.runs.RunService.RunView;

/** Runs found by their store id ({@link RunView#id()}), for other packages that keep that id beside their own rows. */
@ApplicationScoped
public class RunIds {

    @Inject
    EntityManager em;

    @Inject
    RunService runs;

    /** The run, when it exists and the caller may read it; empty otherwise (never telling the two apart). */
    @Transactional
    public Optional<RunView> readable(long runId) {
        Optional<String[]> path = NativeSql.first(em,
                "select e.name, p.name, r.name from runs r join projects p on p.id = r.project_id"
                        + " join entity_names e on e.entity_id = p.entity_id where r.id = ?1",
                row -> new String[] { row.string(0), row.string(1), row.string(2) }, runId);
        if (path.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(runs.get(path.get()[0], path.get()[1], path.get()[2]));
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.FORBIDDEN || e.kind() == ApiException.Kind.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }
}

package dev.fulcrum.runs;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

/**
 * A run's logged values of one metric, for the features that watch runs (automations' metric conditions): the runs
 * package owns {@code run_history}, and this is how others read it.
 */
@ApplicationScoped
public class RunMetricValues {

    @Inject
    EntityManager em;

    /** The run's latest {@code count} numeric values of {@code metric}, newest first (rows without it are skipped). */
    public List<Double> latest(long runId, String metric, int count) {
        return RunHistoryStatements.latest(em, runId, metric, count);
    }
}

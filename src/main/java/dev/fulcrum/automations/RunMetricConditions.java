package dev.fulcrum.automations;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.automations.AutomationCondition.Aggregation;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.AutomationCondition.ZScore;
import dev.fulcrum.runs.RunMetricValues;

/**
 * Evaluates metric conditions on a run's history when a batch of metrics is logged. A condition is looked at only when
 * the batch holds its metric; it needs a full window (threshold: the last N values; change: the last 2N values;
 * z-score: the latest value and the N before it).
 */
@ApplicationScoped
public class RunMetricConditions {

    @Inject
    RunMetricValues metricValues;

    /**
     * What a condition saw: the aggregate of the current window and, for changes, of the prior one; for z-scores the
     * latest value, its z-score and the window it was scored against.
     */
    public record Reading(String metric, double value, Double prior, Double zscore, Integer window) {

        public Reading(String metric, double value, Double prior) {
            this(metric, value, prior, null, null);
        }
    }

    /** The most recent values of metrics of one run, newest first, fetched once per metric per logged batch. */
    public final class History {
        private final long runId;
        private final JsonNode batch;
        private final Map<String, Fetched> values = new HashMap<>();

        History(long runId, JsonNode batch) {
            this.runId = runId;
            this.batch = batch;
        }

        boolean logged(String metric) {
            if (batch == null) {
                return false;
            }
            for (JsonNode row : batch) {
                JsonNode value = row.get(metric);
                if (value != null && value.isNumber()) {
                    return true;
                }
            }
            return false;
        }

        /** Up to {@code count} most recent values; fewer when the run has fewer. */
        List<Double> latest(String metric, int count) {
            Fetched known = values.get(metric);
            if (known == null || (known.asked() < count && known.values().size() == known.asked())) {
                known = new Fetched(count, metricValues.latest(runId, metric, count));
                values.put(metric, known);
            }
            return known.values().subList(0, Math.min(count, known.values().size()));
        }
    }

    private record Fetched(int asked, List<Double> values) {
    }

    public History history(long runId, JsonNode batch) {
        return new History(runId, batch);
    }

    public OptionalDouble evaluate(Threshold threshold, History history) {
        if (!history.logged(threshold.metric())) {
            return OptionalDouble.empty();
        }
        List<Double> latest = history.latest(threshold.metric(), threshold.window());
        if (latest.size() < threshold.window()) {
            return OptionalDouble.empty();
        }
        double value = aggregate(threshold.aggregation(), latest.subList(0, threshold.window()));
        return threshold.holds(value) ? OptionalDouble.of(value) : OptionalDouble.empty();
    }

    public Reading evaluate(Change change, History history) {
        if (!history.logged(change.metric())) {
            return null;
        }
        List<Double> latest = history.latest(change.metric(), 2 * change.window());
        if (latest.size() < 2 * change.window()) {
            return null;
        }
        double current = aggregate(change.aggregation(), latest.subList(0, change.window()));
        double prior = aggregate(change.aggregation(), latest.subList(change.window(), 2 * change.window()));
        return change.holds(prior, current) ? new Reading(change.metric(), current, prior) : null;
    }

    /** The latest value when its z-score against the {@code window} values before it holds; null otherwise. */
    public Reading evaluate(ZScore zscore, History history) {
        if (!history.logged(zscore.metric())) {
            return null;
        }
        List<Double> latest = history.latest(zscore.metric(), zscore.window() + 1);
        if (latest.size() < zscore.window() + 1) {
            return null;
        }
        double value = latest.get(0);
        List<Double> before = latest.subList(1, zscore.window() + 1);
        double mean = before.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        double variance = before.stream().mapToDouble(v -> (v - mean) * (v - mean)).average().orElseThrow();
        double deviation = Math.sqrt(variance);
        if (deviation == 0 || !Double.isFinite(deviation)) {
            return null; // values that do not vary give no z-score
        }
        double z = (value - mean) / deviation;
        return zscore.holds(z) ? new Reading(zscore.metric(), value, null, z, zscore.window()) : null;
    }

    static double aggregate(Aggregation aggregation, List<Double> values) {
        return switch (aggregation) {
            case MAX -> values.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
            case MIN -> values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
            case AVERAGE -> values.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        };
    }
}

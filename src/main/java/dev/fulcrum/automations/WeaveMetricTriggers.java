package dev.fulcrum.automations;

import java.util.List;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.automations.AutomationCondition.WeaveMetric;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.traces.CallScores;
import dev.fulcrum.traces.ScoresRecorded;

/**
 * {@code WEAVE_METRIC_THRESHOLD} automations: when calls of a project end or feedback is added to it, in that
 * transaction, each enabled automation of the project whose op ended a call or whose feedback type was added (a
 * condition on feedback, which may come before the calls it is on) has its aggregate taken again (one statement,
 * {@link CallScores#aggregate}). Whether its condition held the last time is kept
 * ({@code automation_weave_metric_states}); it fires when it holds and did not before, so once per crossing: a
 * {@code WEAVE_METRIC_THRESHOLD} event naming the automation is written, which {@link AutomationTriggers} turns into
 * its delivery (or recorded firing) as any event. A project without such automations pays one indexed query per batch
 * of calls or feedback.
 */
@ApplicationScoped
public class WeaveMetricTriggers {

    @Inject
    TriggerStatements statements;

    @Inject
    CallScores scores;

    @Inject
    PlatformEvents events;

    @Inject
    Access access;

    void onScores(@Observes ScoresRecorded recorded) {
        List<AutomationTriggers.Candidate> candidates = statements
                .candidates(List.of(TriggerEvent.WEAVE_METRIC_THRESHOLD), recorded.projectId(), null);
        if (candidates.isEmpty()) {
            return;
        }
        List<String> ended = null;
        for (AutomationTriggers.Candidate candidate : candidates) {
            WeaveMetric metric = candidate.condition().weaveMetric();
            if (metric == null || metric.path() == null) {
                continue; // neither is saved: a condition is checked first
            }
            CallScores.Path path = metric.path();
            // feedback may arrive before the calls it is on (the SDK sends them in separate batches): a condition on
            // feedback is also evaluated when calls of its op end
            boolean feedbackAdded = path.ofFeedback() && recorded.feedbackTypes().contains(path.feedbackType());
            if (!feedbackAdded) {
                if (recorded.endedCalls().isEmpty()) {
                    continue;
                }
                ended = ended != null ? ended : scores.endedOps(recorded.projectId(), recorded.endedCalls());
                if (!ended.contains(metric.op())) {
                    continue;
                }
            }
            Optional<CallScores.Aggregate> aggregate = scores.aggregate(recorded.projectId(), recorded.project(),
                    metric.op(), path, CallScores.Aggregation.valueOf(metric.aggregation().name()), metric.lastValues(),
                    metric.seconds());
            boolean holds = aggregate.isPresent() && metric.holds(aggregate.get().value());
            if (changed(candidate.id(), holds) && holds) {
                fire(recorded, candidate.id(), metric, aggregate.get());
            }
        }
    }

    /**
     * Stores whether the condition holds; true when that changed (or is the first evaluation). One upsert, which
     * concurrent evaluations cannot race: the second waits for the first's row and then sees no change.
     */
    private boolean changed(long automationId, boolean holds) {
        return statements.weaveMetricHolds(automationId, holds);
    }

    private void fire(ScoresRecorded recorded, long automationId, WeaveMetric metric, CallScores.Aggregate aggregate) {
        String[] names = recorded.project().split("/", 2);
        ObjectNode payload = JsonNodeFactory.instance.objectNode().put("entity_name", names[0])
                .put("project_name", names[1]).put("automation_id", automationId).put("op_name", metric.op())
                .put("metric_name", metric.metric()).put("metric_value", AutomationVariables.number(aggregate.value()))
                .put("metric_window", metric.window()).put("metric_count", aggregate.count());
        Caller caller = access.caller();
        events.record(EventType.WEAVE_METRIC_THRESHOLD, Scope.project(recorded.projectId()), caller.userId(),
                caller.username(), payload);
    }

    /** Forgets whether an automation's condition held (its condition changed): the next evaluation starts afresh. */
    void forget(long automationId) {
        statements.forgetWeaveMetric(automationId);
    }
}

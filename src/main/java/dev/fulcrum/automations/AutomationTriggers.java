package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents.Recorded;

/**
 * The transactional outbox: when an event is written, each matching enabled automation of its project or registry gets
 * a delivery row in the same transaction, with its payload rendered (all of an event's in one statement). One query
 * finds the candidate automations ({@link TriggerStatements}); their conditions (alias regex, run filters, run states,
 * metric windows) are checked here, and a run automation fires at most once per run per 24 hours. An automation that
 * does nothing ({@link AutomationAction#DO_NOTHING}) has its firing recorded instead.
 */
@ApplicationScoped
public class AutomationTriggers {

    @Inject
    TriggerStatements statements;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    RunMetricConditions metrics;

    @Inject
    AutomationPayloads payloads;

    /**
     * An enabled automation that may fire for an event ({@code slackChannel}: the channel of a notification's Slack
     * integration).
     */
    record Candidate(long id, TriggerEvent event, AutomationCondition condition, Long teamEntityId, Long webhookId,
            String payload, List<String> grantedSecrets, AutomationAction action, String slackChannel) {
    }

    void onRecorded(@Observes Recorded recorded) {
        List<TriggerEvent> events = TriggerEvent.of(recorded.type());
        // events in a registry fire its automations; a link and an unlink also fire those of the project it comes from
        Long registryId = recorded.scope().registryId();
        Long projectId = registryId == null || recorded.type() == EventType.LINK_ARTIFACT
                || recorded.type() == EventType.UNLINK_ARTIFACT ? recorded.scope().projectId() : null;
        List<Candidate> candidates = statements.candidates(events, projectId, registryId);
        if (candidates.isEmpty()) {
            return;
        }
        ObjectNode payload = recorded.payload();
        RunMetricConditions.History history = null;
        List<DeliveryQueue.Queued> queued = new ArrayList<>(candidates.size());
        List<Long> fired = new ArrayList<>();
        for (Candidate candidate : candidates) {
            AutomationCondition condition = candidate.condition();
            RunMetricConditions.Reading reading = null;
            if (candidate.event().isArtifactEvent()
                    && !condition.collectionMatches(text(payload, "artifact_collection_name"))) {
                continue;
            }
            switch (candidate.event()) {
                case ADD_ARTIFACT_ALIAS -> {
                    if (!condition.aliasMatches(text(payload, "alias"))) {
                        continue;
                    }
                }
                case ADD_ARTIFACT_TAG, REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG, REMOVE_COLLECTION_TAG -> {
                    if (!condition.tagMatches(text(payload, "tag"))) {
                        continue;
                    }
                }
                case RUN_STATE -> {
                    if (!runMatches(condition, payload) || !condition.stateMatches(text(payload, "state"))) {
                        continue;
                    }
                }
                case RUN_METRIC_THRESHOLD -> {
                    if (!runMatches(condition, payload)) {
                        continue;
                    }
                    history = history != null ? history : metrics.history(runId(payload), payload.get("metrics"));
                    OptionalDouble value = metrics.evaluate(condition.threshold(), history);
                    if (value.isEmpty()) {
                        continue;
                    }
                    reading = new RunMetricConditions.Reading(condition.threshold().metric(), value.getAsDouble(),
                            null);
                }
                case RUN_METRIC_CHANGE -> {
                    if (!runMatches(condition, payload)) {
                        continue;
                    }
                    history = history != null ? history : metrics.history(runId(payload), payload.get("metrics"));
                    reading = metrics.evaluate(condition.change(), history);
                    if (reading == null) {
                        continue;
                    }
                }
                case RUN_METRIC_ZSCORE -> {
                    if (!runMatches(condition, payload)) {
                        continue;
                    }
                    history = history != null ? history : metrics.history(runId(payload), payload.get("metrics"));
                    reading = metrics.evaluate(condition.zscore(), history);
                    if (reading == null) {
                        continue;
                    }
                }
                case WEAVE_METRIC_THRESHOLD -> {
                    // the crossing of one automation's condition (WeaveMetricTriggers): that automation's only
                    JsonNode crossed = payload.get("automation_id");
                    if (crossed == null || crossed.asLong() != candidate.id()) {
                        continue;
                    }
                }
                default -> {
                }
            }
            if (candidate.event().isRunEvent() && !statements.firstFiringToday(candidate.id(), runId(payload))) {
                continue;
            }
            if (candidate.action() == AutomationAction.DO_NOTHING) {
                fired.add(candidate.id());
                continue;
            }
            Map<String, String> variables = AutomationVariables.of(candidate.event(), recorded.id(), payload, reading);
            queued.add(payloads.render(candidate, recorded.id(), variables));
        }
        if (!queued.isEmpty()) {
            deliveries.enqueueAll(queued);
        }
        if (!fired.isEmpty()) {
            statements.recordFirings(fired, recorded.id());
        }
    }

    private static boolean runMatches(AutomationCondition condition, ObjectNode payload) {
        return condition.runMatches(text(payload, "run_created_by"), text(payload, "run_name"),
                text(payload, "run_display_name"));
    }

    private static long runId(ObjectNode payload) {
        return payload.get("run_id").asLong();
    }

    private static String text(ObjectNode payload, String field) {
        JsonNode value = payload.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

}

package dev.fulcrum.automations;

import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Sort;

import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents.Recorded;
import dev.fulcrum.platform.NativeSql;
import dev.fulcrum.platform.StoredJson;

/**
 * The transactional outbox: when an event is written, each matching enabled automation of its project or registry gets
 * a delivery row in the same transaction, with its payload rendered. One query finds the candidate automations; their
 * conditions (alias regex, run filters, run states, metric windows) are checked here, and a run automation fires at
 * most once per run per 24 hours.
 */
@ApplicationScoped
public class AutomationTriggers {

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    RunMetricConditions metrics;

    @Inject
    AutomationPayloads payloads;

    /** An enabled automation that may fire for an event. */
    record Candidate(long id, TriggerEvent event, AutomationCondition condition, long teamEntityId, long webhookId,
            String payload, List<String> grantedSecrets) {
    }

    void onRecorded(@Observes Recorded recorded) {
        List<TriggerEvent> events = TriggerEvent.of(recorded.type());
        // events in a registry fire its automations; a link also fires those of the project it comes from
        Long registryId = recorded.scope().registryId();
        Long projectId = registryId == null || recorded.type() == EventType.LINK_ARTIFACT ? recorded.scope().projectId()
                : null;
        List<Candidate> candidates = candidates(events, projectId, registryId);
        if (candidates.isEmpty()) {
            return;
        }
        ObjectNode payload = recorded.payload();
        RunMetricConditions.History history = null;
        for (Candidate candidate : candidates) {
            AutomationCondition condition = candidate.condition();
            RunMetricConditions.Reading reading = null;
            switch (candidate.event()) {
                case ADD_ARTIFACT_ALIAS -> {
                    if (!condition.aliasMatches(text(payload, "alias"))) {
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
                default -> {
                }
            }
            if (candidate.event().isRunEvent() && !firstFiringToday(candidate.id(), runId(payload))) {
                continue;
            }
            Map<String, String> variables = AutomationVariables.of(candidate.event(), recorded.id(), payload, reading);
            payloads.enqueue(candidate, recorded.id(), variables);
        }
    }

    private static boolean runMatches(AutomationCondition condition, ObjectNode payload) {
        return condition.runMatches(text(payload, "run_created_by"), text(payload, "run_name"));
    }

    private static long runId(ObjectNode payload) {
        return payload.get("run_id").asLong();
    }

    private static String text(ObjectNode payload, String field) {
        JsonNode value = payload.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private List<Candidate> candidates(List<TriggerEvent> events, Long projectId, Long registryId) {
        List<Automation> found = Automation.list("enabled and eventType in ?1 and (projectId = ?2 or registryId = ?3)",
                Sort.by("id"), events.stream().map(Enum::name).toList(), projectId, registryId);
        return found.stream()
                .map(a -> new Candidate(a.id, TriggerEvent.valueOf(a.eventType),
                        AutomationCondition.fromJson(storedJson.readObject(a.condition)), a.teamEntityId, a.webhookId,
                        a.payload, List.copyOf(a.grantedSecrets)))
                .toList();
    }

    /**
     * Records a firing of the automation for the run unless it fired for that run in the last 24 hours. Native: an
     * upsert whose condition decides, in one statement that concurrent events cannot race, whether this is the first.
     */
    private boolean firstFiringToday(long automationId, long runId) {
        return NativeSql.update(em, """
                insert into automation_run_firings (automation_id, run_id, fired_at) values (?1, ?2, now())
                on conflict (automation_id, run_id) do update set fired_at = excluded.fired_at
                where automation_run_firings.fired_at <= now() - interval '24 hours'""", automationId, runId) == 1;
    }
}

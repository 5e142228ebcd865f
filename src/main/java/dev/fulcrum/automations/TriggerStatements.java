package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The SQL every platform event runs through ({@link AutomationTriggers}), native because it is on the measured paths of
 * bench/webhooks.sh and bench/metrics.sh: the candidate automations in one statement over an array of event types (an
 * entity query with an {@code in} list is translated anew on every call and loads managed entities), and the upsert
 * that decides whether a run automation fires today.
 */
@ApplicationScoped
class TriggerStatements {

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    ObjectMapper json;

    /** The enabled automations on one of {@code events} of the project or the registry, in id order. */
    List<AutomationTriggers.Candidate> candidates(List<TriggerEvent> events, Long projectId, Long registryId) {
        return NativeSql.list(em, """
                select a.id, a.event_type, cast(a.condition as text), a.team_entity_id, a.webhook_id, a.payload,
                       cast(array_to_json(a.granted_secrets) as text), a.action_type, w.slack_channel
                from automations a left join webhooks w on w.id = a.webhook_id
                where a.enabled and a.event_type = any(cast(?1 as text[]))
                and (a.project_id = ?2 or a.registry_id = ?3) order by a.id""", row -> candidate(row),
                NativeSql.textArray(events.stream().map(Enum::name).toList()), NativeSql.typed(projectId, Long.class),
                NativeSql.typed(registryId, Long.class));
    }

    /**
     * Records a firing of the automation for the run unless it fired for that run in the last 24 hours: an upsert whose
     * condition decides, in one statement that concurrent events cannot race, whether this is the first.
     */
    boolean firstFiringToday(long automationId, long runId) {
        return NativeSql.update(em, """
                insert into automation_run_firings (automation_id, run_id, fired_at) values (?1, ?2, now())
                on conflict (automation_id, run_id) do update set fired_at = excluded.fired_at
                where automation_run_firings.fired_at <= now() - interval '24 hours'""", automationId, runId) == 1;
    }

    private AutomationTriggers.Candidate candidate(NativeSql.Row row) {
        List<String> granted = new ArrayList<>();
        String grantedJson = row.string(6);
        if (grantedJson != null) {
            try {
                for (JsonNode name : json.readTree(grantedJson)) {
                    granted.add(name.asText());
                }
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("An array of names is not readable as JSON", e);
            }
        }
        return new AutomationTriggers.Candidate(row.longValue(0), TriggerEvent.valueOf(row.string(1)),
                AutomationCondition.fromJson(storedJson.readObject(row.string(2))), row.longValue(3), row.longValue(4),
                row.string(5), List.copyOf(granted), AutomationAction.valueOf(row.string(7)), row.string(8));
    }

    /** Records the firings of automations that do nothing: one row each, in the event's transaction. */
    void recordFirings(List<Long> automationIds, long eventId) {
        NativeSql.update(em, """
                insert into automation_firings (automation_id, event_id)
                select id, ?2 from unnest(?1) as id""", automationIds.toArray(Long[]::new), eventId);
    }

    /**
     * Keeps whether the automation's Weave metric condition holds; true when that changed (a first evaluation is a
     * change). The row's lock orders concurrent evaluations.
     */
    boolean weaveMetricHolds(long automationId, boolean holds) {
        return NativeSql.update(em, """
                insert into automation_weave_metric_states (automation_id, holding) values (?1, ?2)
                on conflict (automation_id) do update set holding = excluded.holding, changed_at = now()
                where automation_weave_metric_states.holding <> excluded.holding""", automationId, holds) == 1;
    }

    /** Forgets whether the automation's Weave metric condition held. */
    void forgetWeaveMetric(long automationId) {
        NativeSql.update(em, "delete from automation_weave_metric_states where automation_id = ?1", automationId);
    }
}

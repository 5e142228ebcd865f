package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * What the automations' views read besides their entities ({@link Automations}): the newest delivery and the last
 * firing of each automation of a scope, or of one automation, each in one statement.
 */
@ApplicationScoped
class AutomationStatements {

    @Inject
    EntityManager em;

    /**
     * The newest delivery of each automation of the scope ({@code column} = {@code project_id} or {@code registry_id}),
     * by automation id.
     */
    List<Map.Entry<Long, Automations.LastDelivery>> lastDeliveries(String column, Long scopeId) {
        return NativeSql.list(em, """
                select distinct on (d.automation_id) d.automation_id, d.id, d.state, d.created_at, d.completed_at
                from webhook_deliveries d join automations a on a.id = d.automation_id
                where a.%s = ?1 order by d.automation_id, d.id desc""".formatted(column),
                row -> Map.entry(row.longValue(0),
                        new Automations.LastDelivery(row.longValue(1), row.string(2), row.time(3), row.time(4))),
                scopeId);
    }

    /** The last firing of each automation of the scope that fired, by automation id. */
    List<Map.Entry<Long, OffsetDateTime>> lastFirings(String column, Long scopeId) {
        return NativeSql.list(em, """
                select f.automation_id, max(f.fired_at) from automation_firings f join automations a
                on a.id = f.automation_id where a.%s = ?1 group by f.automation_id""".formatted(column),
                row -> Map.entry(row.longValue(0), row.time(1)), scopeId);
    }

    /** The automation's newest delivery, if it has one. */
    Optional<Automations.LastDelivery> lastDelivery(long automationId) {
        return NativeSql.first(em, """
                select id, state, created_at, completed_at from webhook_deliveries
                where automation_id = ?1 order by id desc""",
                r -> new Automations.LastDelivery(r.longValue(0), r.string(1), r.time(2), r.time(3)), automationId);
    }

    /** When the automation last fired (empty, or a null time, when it never did). */
    Optional<OffsetDateTime> lastFiring(long automationId) {
        return NativeSql.first(em, "select max(fired_at) from automation_firings where automation_id = ?1",
                r -> r.time(0), automationId);
    }
}

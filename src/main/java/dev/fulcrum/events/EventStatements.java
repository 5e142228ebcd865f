package dev.fulcrum.events;

import jakarta.persistence.EntityManager;

import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.NativeSql;

/**
 * Writing an event in native SQL: every change that reports one (a metric batch, a tag) pays for it, and the ORM's
 * persist of a new entity measured several times the CPU of the one statement it sends (bench/metrics.sh).
 */
final class EventStatements {

    private EventStatements() {
    }

    /** Inserts an event; its id. */
    static long insert(EntityManager em, EventType type, Scope scope, long authorId, String payload) {
        return NativeSql.first(em, """
                insert into platform_events (type, project_id, registry_id, author_id, payload)
                values (?1, ?2, ?3, ?4, cast(?5 as jsonb)) returning id""", row -> row.longValue(0), type.name(),
                scope.projectId(), NativeSql.typed(scope.registryId(), Long.class), authorId, payload).orElseThrow();
    }
}

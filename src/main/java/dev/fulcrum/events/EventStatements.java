package dev.fulcrum.events;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.persistence.EntityManager;

import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.database.NativeSql;

/**
 * Writing an event in native SQL: every change that reports one (a metric batch, a tag) pays for it, and the ORM's
 * persist of a new entity measured several times the CPU of the one statement it sends (bench/metrics.sh).
 */
final class EventStatements {

    private EventStatements() {
    }

    /** An event's payload (JSON text), time and author's name as read. */
    record Stored(String payload, OffsetDateTime occurredAt, String author) {
    }

    /**
     * A project's events of one type whose payload has {@code value} at {@code key}, oldest first (an index scan of the
     * project's log), with the author's name, or the payload's {@code event_author} once the user is gone.
     */
    static List<Stored> withPayload(EntityManager em, long projectId, EventType type, String key, String value) {
        return NativeSql.list(em, """
                select e.payload, e.occurred_at, coalesce(u.username, e.payload ->> 'event_author')
                from platform_events e left join account_names u on u.user_id = e.author_id
                where e.project_id = ?1 and e.type = ?2 and e.payload ->> ?3 = ?4
                order by e.id""", row -> new Stored(row.string(0), row.time(1), row.string(2)), projectId, type.name(),
                key, value);
    }

    /** Inserts an event; its id. */
    /** An event of the server itself: no project, no registry, no author. */
    static long insertServer(EntityManager em, EventType type, String payload) {
        return NativeSql.first(em, """
                insert into platform_events (type, payload) values (?1, cast(?2 as jsonb)) returning id""",
                row -> row.longValue(0), type.name(), payload).orElseThrow();
    }

    static long insert(EntityManager em, EventType type, Scope scope, long authorId, String payload) {
        return NativeSql.first(em, """
                insert into platform_events (type, project_id, registry_id, author_id, payload)
                values (?1, ?2, ?3, ?4, cast(?5 as jsonb)) returning id""", row -> row.longValue(0), type.name(),
                scope.projectId(), NativeSql.typed(scope.registryId(), Long.class), authorId, payload).orElseThrow();
    }
}

package dev.fulcrum.events;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import jakarta.transaction.Transactional.TxType;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The platform event log. An event is written in the transaction of the change it reports ({@code MANDATORY}: there
 * must be one), so it commits and rolls back with that change.
 */
@ApplicationScoped
public class PlatformEvents {

    public static final int DEFAULT_PAGE = 100;
    public static final int MAX_PAGE = 1000;

    /** A page of events of one scope with the names of that scope and of the author: one statement. */
    private static final String LISTING = """
            select e.id, e.type, e.occurredAt, en.name, p.name, r.name, u.username, e.payload
            from LoggedEvent e
            left join Project p on p.id = e.projectId
            left join PlatformEntity en on en.id = p.entityId
            left join Registry r on r.id = e.registryId
            left join User u on u.id = e.authorId
            where e.%s = ?1 and e.id < ?2 order by e.id desc""";
    private static final String PROJECT_EVENTS = LISTING.formatted("projectId");
    private static final String REGISTRY_EVENTS = LISTING.formatted("registryId");
    /** The server's own events (no project, no registry). */
    private static final String SERVER_EVENTS = LISTING.replace("e.%s = ?1 and e.id < ?2",
            "e.projectId is null and e.registryId is null and e.id < ?1");

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    Access access;

    @Inject
    jakarta.enterprise.event.Event<Recorded> recorded;

    /** Where an event happened: a project and, for links into a registry, the registry. */
    public record Scope(long projectId, Long registryId) {
        public static Scope project(long projectId) {
            return new Scope(projectId, null);
        }
    }

    /** An event as stored, with the names of its scope and author. */
    public record Event(long id, EventType type, OffsetDateTime occurredAt, String entity, String project,
            String registry, String author, ObjectNode payload) {
    }

    public record Page(List<Event> events, Long nextBefore) {
    }

    /** An event found by its payload: the payload, when it happened and who caused it. */
    public record Found(ObjectNode payload, OffsetDateTime occurredAt, String author) {
    }

    /**
     * A project's events of one type whose payload has {@code value} at {@code key} (a run's {@code RUN_STATE} changes:
     * {@code run_id}), oldest first. No access check: the caller checked the project.
     */
    public List<Found> withPayload(long projectId, EventType type, String key, String value) {
        return EventStatements.withPayload(em, projectId, type, key, value).stream()
                .map(e -> new Found(storedJson.readObject(e.payload()), e.occurredAt(), e.author())).toList();
    }

    /**
     * Fired synchronously, in the event's transaction, after an event was written: observers (automations) add their
     * own rows in the same transaction, so they commit and roll back with the change.
     */
    public record Recorded(long id, EventType type, Scope scope, long authorId, ObjectNode payload) {
    }

    /**
     * Writes an event. {@code payload} gets {@code event_type} and {@code event_author} added; the caller fills in the
     * rest (entity_name, project_name and the type's own variables).
     */
    @Transactional(TxType.MANDATORY)
    public long record(EventType type, Scope scope, long authorId, String authorName, ObjectNode payload) {
        payload.put("event_type", type.name());
        payload.put("event_author", authorName);
        long id = EventStatements.insert(em, type, scope, authorId, storedJson.write(payload));
        recorded.fire(new Recorded(id, type, scope, authorId, payload));
        return id;
    }

    /**
     * Writes an event of the server itself (of no project: nothing for automations), in the caller's transaction;
     * {@code payload} gets {@code event_type} and {@code event_author} ({@code fulcrum}, the server) added.
     */
    @Transactional(TxType.MANDATORY)
    public long recordServer(EventType type, ObjectNode payload) {
        payload.put("event_type", type.name());
        payload.put("event_author", "fulcrum");
        return EventStatements.insertServer(em, type, storedJson.write(payload));
    }

    /** The server's own events, newest first; needs a server administrator. */
    @Transactional
    public Page ofServer(Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        access.serverAdmin();
        return page(SERVER_EVENTS, null, size, before);
    }

    /** The events of a project, newest first; needs the admin role on the project. */
    @Transactional
    public Page ofProject(String entity, String project, Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        ProjectRef ref = access.project(entity, project, Role.ADMIN);
        return page(PROJECT_EVENTS, ref.projectId(), size, before);
    }

    /** The events of a registry, newest first; needs the admin role on the registry. */
    @Transactional
    public Page ofRegistry(String registry, Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        long registryId = access.registry(registry, Role.ADMIN).registryId();
        return page(REGISTRY_EVENTS, registryId, size, before);
    }

    /** The row an event is listed from: the event and the names of its scope and author. */
    record Listed(long id, EventType type, OffsetDateTime occurredAt, String entity, String project, String registry,
            String author, String payload) {
    }

    /**
     * A page by key (ids below {@code before}), so that events logged meanwhile do not shift it; {@code scopeId} null
     * for the server's own events.
     */
    private Page page(String query, Long scopeId, int size, Long before) {
        List<Event> events = new ArrayList<>(size + 1);
        long below = before == null ? Long.MAX_VALUE : before;
        var statement = em.createQuery(query, Listed.class);
        (scopeId == null ? statement.setParameter(1, below) : statement.setParameter(1, scopeId).setParameter(2, below))
                .setMaxResults(size + 1).getResultList()
                .forEach(e -> events.add(new Event(e.id(), e.type(), e.occurredAt(), e.entity(), e.project(),
                        e.registry(), e.author(), storedJson.readObject(e.payload()))));
        if (events.size() > size) {
            events.remove(size);
            return new Page(events, events.get(size - 1).id());
        }
        return new Page(events, null);
    }

}

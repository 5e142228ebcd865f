package dev.fulcrum.events;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import jakarta.transaction.Transactional.TxType;

import org.hibernate.Session;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.QueryParams;
import dev.fulcrum.platform.StoredJson;

/**
 * The platform event log. An event is written in the transaction of the change it reports ({@code MANDATORY}: there
 * must be one), so it commits and rolls back with that change.
 */
@ApplicationScoped
public class PlatformEvents {

    public static final int DEFAULT_PAGE = 100;
    public static final int MAX_PAGE = 1000;

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
        String body = storedJson.write(payload);
        long id = em.unwrap(Session.class).doReturningWork(connection -> {
            try (PreparedStatement insert = connection.prepareStatement("""
                    insert into platform_events (type, project_id, registry_id, author_id, payload)
                    values (?, ?, ?, ?, ?::jsonb) returning id""")) {
                insert.setString(1, type.name());
                insert.setLong(2, scope.projectId());
                if (scope.registryId() == null) {
                    insert.setNull(3, Types.BIGINT);
                } else {
                    insert.setLong(3, scope.registryId());
                }
                insert.setLong(4, authorId);
                insert.setString(5, body);
                try (ResultSet rs = insert.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
        recorded.fire(new Recorded(id, type, scope, authorId, payload));
        return id;
    }

    /** The events of a project, newest first; needs the admin role on the project. */
    @Transactional
    public Page ofProject(String entity, String project, Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        ProjectRef ref = access.project(entity, project, Role.ADMIN);
        return page(ScopeColumn.PROJECT, ref.projectId(), size, before);
    }

    /** The events of a registry, newest first; needs the admin role on the registry. */
    @Transactional
    public Page ofRegistry(String registry, Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        long registryId = access.registry(registry, Role.ADMIN).registryId();
        return page(ScopeColumn.REGISTRY, registryId, size, before);
    }

    private Page page(ScopeColumn scope, long scopeId, int size, Long before) {
        List<Event> events = new ArrayList<>(size);
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement query = connection.prepareStatement(scope.query)) {
                query.setLong(1, scopeId);
                query.setLong(2, before == null ? Long.MAX_VALUE : before);
                query.setInt(3, size + 1);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        events.add(new Event(rs.getLong(1), EventType.valueOf(rs.getString(2)),
                                rs.getObject(3, OffsetDateTime.class), rs.getString(4), rs.getString(5),
                                rs.getString(6), rs.getString(7), storedJson.readObject(rs.getString(8))));
                    }
                }
            }
        });
        if (events.size() > size) {
            events.remove(size);
            return new Page(events, events.get(size - 1).id());
        }
        return new Page(events, null);
    }

    /** The two scopes a log is read by; each with its fixed query. */
    private enum ScopeColumn {
        PROJECT("project_id"), REGISTRY("registry_id");

        final String query;

        ScopeColumn(String column) {
            this.query = """
                    select e.id, e.type, e.occurred_at, en.name, p.name, r.name, u.username, e.payload::text
                    from platform_events e
                    left join projects p on p.id = e.project_id
                    left join entities en on en.id = p.entity_id
                    left join registries r on r.id = e.registry_id
                    left join users u on u.id = e.author_id
                    where e.%s = ? and e.id < ? order by e.id desc limit ?""".formatted(column);
        }
    }

}

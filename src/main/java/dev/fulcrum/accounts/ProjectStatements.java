package dev.fulcrum.accounts;

import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * Creates projects. Native SQL because PostgreSQL's {@code insert ... on conflict do nothing} creates a project that
 * concurrent requests (or replicas) may create at the same moment in one statement, without a read-then-insert race.
 */
final class ProjectStatements {

    private ProjectStatements() {
    }

    /** The id of a new project; empty if the entity has a project of that name already. */
    static Optional<Long> insert(EntityManager em, long entityId, String name, String description, long createdBy) {
        return NativeSql.list(em, """
                insert into projects (entity_id, name, description, created_by) values (?1, ?2, ?3, ?4)
                on conflict (entity_id, name) do nothing returning id""", row -> row.longValue(0), entityId, name,
                NativeSql.typed(description, String.class), createdBy).stream().findFirst();
    }
}

package dev.fulcrum.accounts;

import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.accounts.Access.Stored;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The access check in native SQL: every project-scoped request runs it, and as a JPQL projection it measured several
 * times the CPU of the one statement it sends (bench/metrics.sh).
 */
final class AccessStatements {

    /** The entity by name, its project of that name (none for ""), the user's stored role, and whether it is a team. */
    private static final String RESOLVE = """
            select e.id, p.id, m.role, e.kind = 'TEAM' from entities e
            left join projects p on p.entity_id = e.id and p.name = ?2
            left join entity_members m on m.entity_id = e.id and m.user_id = ?3
            where e.name = ?1""";

    private AccessStatements() {
    }

    /**
     * The entity, its project of that name (or null), the user's stored role on the entity (or null), and whether the
     * entity is a team.
     */
    static Optional<Stored> resolve(EntityManager em, String entity, String project, long userId) {
        return NativeSql.first(em, RESOLVE,
                row -> new Stored(row.longValue(0), row.longValue(1),
                        row.value(2) == null ? null : Role.valueOf(row.string(2)), row.bool(3)),
                entity, project, userId);
    }
}

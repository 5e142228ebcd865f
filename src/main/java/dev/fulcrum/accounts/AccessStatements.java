package dev.fulcrum.accounts;

import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.accounts.Access.Stored;
import dev.fulcrum.platform.NativeSql;

/**
 * The access check in native SQL: every project-scoped request runs it, and as a JPQL projection it measured several
 * times the CPU of the one statement it sends (bench/metrics.sh).
 */
final class AccessStatements {

    private static final String RESOLVE = """
            select e.id, p.id, m.role from entities e
            left join projects p on p.entity_id = e.id and p.name = ?2
            left join entity_members m on m.entity_id = e.id and m.user_id = ?3
            where e.name = ?1""";

    private static final String TEAM = """
            select e.id, m.role from entities e
            left join entity_members m on m.entity_id = e.id and m.user_id = ?2
            where e.name = ?1 and e.kind = 'TEAM'""";

    private AccessStatements() {
    }

    /** The team of that name and the user's stored role on it (or null); empty when no team has the name. */
    static Optional<Access.TeamRole> team(EntityManager em, String team, long userId) {
        return NativeSql.first(em, TEAM,
                row -> new Access.TeamRole(row.longValue(0), row.value(1) == null ? null : Role.valueOf(row.string(1))),
                team, userId);
    }

    /** The entity, its project of that name (or null), and the user's stored role on the entity (or null). */
    static Optional<Stored> resolve(EntityManager em, String entity, String project, long userId) {
        return NativeSql.first(em, RESOLVE, row -> new Stored(row.longValue(0), row.longValue(1),
                row.value(2) == null ? null : Role.valueOf(row.string(2))), entity, project, userId);
    }
}

package dev.fulcrum.automations;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.ApiException;

/** Resolves a team by name and checks the caller's role on it (server administrators have every role). */
@ApplicationScoped
class TeamScope {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    /** A team and the caller's role on it. */
    record Team(long id, String name, Role role) {
    }

    /** The team with the caller's role, which must reach {@code required}: 401, 404 (also for users), 403. */
    Team require(String team, Role required) {
        Object[] row = row(team);
        long id = ((Number) row[0]).longValue();
        Role role = access.authorize(team, null, id, null, (String) row[2], required).role();
        return new Team(id, team, role);
    }

    /**
     * The team with the caller's role on it, null when the caller has none (server administrators are admins of every
     * team): 401, 404 (also for users), never 403; the caller decides what the role allows.
     */
    Team find(String team) {
        Object[] row = row(team);
        Role role = access.caller().admin() ? Role.ADMIN : row[2] == null ? null : Role.valueOf((String) row[2]);
        return new Team(((Number) row[0]).longValue(), team, role);
    }

    private Object[] row(String team) {
        long userId = access.caller().userId();
        List<?> rows = em.createNativeQuery("""
                select e.entity_id, e.kind, m.role from entity_names e
                left join memberships m on m.entity_id = e.entity_id and m.user_id = ?2
                where e.name = ?1""").setParameter(1, team).setParameter(2, userId).getResultList();
        if (rows.isEmpty() || !"TEAM".equals(((Object[]) rows.get(0))[1])) {
            throw ApiException.notFound("Team " + team + " not found");
        }
        return (Object[]) rows.get(0);
    }
}

package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Teams are entities whose members have roles; the creator of a team is its first admin. A team always keeps an admin,
 * and is deleted only once it owns no projects, so that deleting a team never deletes work by surprise.
 */
@ApplicationScoped
public class Teams extends Memberships<PlatformEntity> {

    @Inject
    EntityManager em;

    @Transactional
    public PlatformEntity create(String name, long creatorId) {
        AdvisoryLocks.lock(em, AdvisoryLocks.ENTITIES, name);
        if (PlatformEntity.findByName(name) != null) {
            throw ApiException.conflict("The name " + name + " is taken");
        }
        PlatformEntity team = new PlatformEntity();
        team.name = name;
        team.kind = PlatformEntity.Kind.TEAM;
        team.persist();
        Roster.of(team).founder(User.findById(creatorId));
        return team;
    }

    /** The teams the caller belongs to; every team for server administrators. */
    @Transactional
    @SuppressWarnings("unchecked")
    public List<WithRole<PlatformEntity>> list() {
        Caller caller = access.caller();
        if (caller.admin()) {
            return PlatformEntity.<PlatformEntity> list("kind = ?1 order by name", PlatformEntity.Kind.TEAM).stream()
                    .map(team -> new WithRole<>(team, Role.ADMIN)).toList();
        }
        return (List<WithRole<PlatformEntity>>) (List<?>) em.createQuery("""
                select new dev.fulcrum.accounts.WithRole(e, m.role) from PlatformEntity e, EntityMember m
                where m.entityId = e.id and m.userId = ?1 and e.kind = ?2 order by e.name""", WithRole.class)
                .setParameter(1, caller.userId()).setParameter(2, PlatformEntity.Kind.TEAM).getResultList();
    }

    @Transactional
    public WithRole<PlatformEntity> get(String name) {
        return scoped(name, Role.VIEWER);
    }

    /** Deletes the team and its memberships; 409 while it owns projects. */
    @Transactional
    public void delete(String name) {
        PlatformEntity team = scoped(name, Role.ADMIN).value();
        em.lock(team, LockModeType.PESSIMISTIC_WRITE);
        long projects = Project.count("entityId", team.id);
        if (projects > 0) {
            throw ApiException
                    .conflict("Team " + name + " still owns " + projects + " project(s); delete them before the team");
        }
        team.delete();
    }

    /** Adds the user to the team, or changes its role. */
    @Transactional
    public Membership setMember(long teamId, long userId, Role role) {
        return Roster.of(PlatformEntity.<PlatformEntity> findById(teamId)).set(User.findById(userId), role);
    }

    @Override
    Roster<?> roster(PlatformEntity owner) {
        return Roster.of(owner);
    }

    @Override
    String describe(String name) {
        return name;
    }

    /** Personal entities are not teams: 404. */
    @Override
    WithRole<PlatformEntity> scoped(String name, Role required) {
        PlatformEntity team = PlatformEntity.findByName(name);
        if (team == null || team.kind != PlatformEntity.Kind.TEAM) {
            throw ApiException.notFound("Team " + name + " not found");
        }
        return new WithRole<>(team, access.entity(name, required).role());
    }
}

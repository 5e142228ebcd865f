package dev.fulcrum.accounts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.ApiException;

/** Teams are entities whose members have roles; the creator of a team is its first admin. */
@ApplicationScoped
public class Teams {

    @Transactional
    public PlatformEntity create(String name, long creatorId) {
        Names.requireEntity(name, "body", "name");
        if (PlatformEntity.findByName(name) != null) {
            throw ApiException.conflict("The name " + name + " is taken");
        }
        PlatformEntity team = new PlatformEntity();
        team.name = name;
        team.kind = PlatformEntity.Kind.TEAM;
        team.persist();
        setMember(team.id, creatorId, Role.ADMIN);
        return team;
    }

    /** Adds the user to the team, or changes its role. */
    @Transactional
    public EntityMember setMember(long teamId, long userId, Role role) {
        EntityMember member = EntityMember.find(teamId, userId);
        if (member == null) {
            member = new EntityMember();
            member.entityId = teamId;
            member.userId = userId;
            member.role = role;
            member.persist();
        } else {
            member.role = role;
        }
        return member;
    }
}

package dev.fulcrum.wandb;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.accounts.Teams;
import dev.fulcrum.accounts.User;
import dev.fulcrum.accounts.Users;
import dev.fulcrum.wandb.WandbNodes.EntityNode;
import dev.fulcrum.wandb.WandbNodes.UserNode;

/** The caller and entities as the W&B schema shows them, read through the accounts services. */
@ApplicationScoped
class WandbAccounts {

    @Inject
    Access access;

    @Inject
    Users users;

    @Inject
    Teams teams;

    @Transactional
    UserNode viewer() {
        User user = users.me();
        return new UserNode(WandbNodes.opaque("User", Long.toString(user.id)), user.username, user.username, user.email,
                user.entity.name, "{}", user.admin, node(user.entity));
    }

    /** A user as the W&B schema shows another user: names only; null when there is no such user. */
    @Transactional
    UserNode user(String username) {
        User user = User.findByUsername(username);
        return user == null ? null
                : new UserNode(WandbNodes.opaque("User", Long.toString(user.id)), user.username, user.username, null,
                        user.entity.name, null, null, null);
    }

    /** The teams the caller belongs to. */
    @Transactional
    List<EntityNode> teams() {
        return teams.list().stream().map(team -> node(team.value())).toList();
    }

    /** An entity the caller may read; unknown entity: 404. */
    @Transactional
    EntityNode entity(String name) {
        access.entity(name, Role.VIEWER);
        return node(PlatformEntity.findByName(name));
    }

    /** The caller's personal entity's name: the entity of a request that names none. */
    String defaultEntity() {
        return access.caller().username();
    }

    private static EntityNode node(PlatformEntity entity) {
        return new EntityNode(WandbNodes.opaque("Entity", Long.toString(entity.id)), entity.name,
                entity.kind == PlatformEntity.Kind.TEAM);
    }
}

package dev.fulcrum.accounts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.ApiException;

/** Creates users, each with a personal entity of the same name that the user administers. */
@ApplicationScoped
public class Users {

    @Transactional
    public User create(String username, String email, boolean admin) {
        Names.requireEntity(username, "body", "username");
        if (PlatformEntity.findByName(username) != null) {
            throw ApiException.conflict("The name " + username + " is taken");
        }
        PlatformEntity entity = new PlatformEntity();
        entity.name = username;
        entity.kind = PlatformEntity.Kind.USER;
        entity.persist();
        User user = new User();
        user.username = username;
        user.email = email;
        user.admin = admin;
        user.entity = entity;
        user.persist();
        EntityMember owner = new EntityMember();
        owner.entityId = entity.id;
        owner.userId = user.id;
        owner.role = Role.ADMIN;
        owner.persist();
        return user;
    }
}

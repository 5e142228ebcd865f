package dev.fulcrum.accounts;

import java.util.List;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Creates users, each with a personal entity of the same name that the user administers. */
@ApplicationScoped
public class Users {

    /** Deliberately loose: one {@code @} with something on both sides; mail delivery is the real check. */
    private static final Pattern EMAIL = Pattern.compile("[^@\\s]+@[^@\\s]+");
    private static final int EMAIL_MAX = 320;

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Transactional
    public User create(String username, String email, boolean admin) {
        if (email != null && (email.length() > EMAIL_MAX || !EMAIL.matcher(email).matches())) {
            throw ApiException.invalid(Violation.of("Must be an e-mail address", "value_error", "body", "email"));
        }
        AdvisoryLocks.lock(em, AdvisoryLocks.ENTITIES, username);
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
        EntityMember owner = EntityMember.of(entity.id, user.id);
        owner.role = Role.ADMIN;
        owner.persist();
        return user;
    }

    /** The calling user. */
    @Transactional
    public User me() {
        return User.findById(access.caller().userId());
    }

    @Transactional
    public List<User> list() {
        return User.find("select u from User u join fetch u.entity order by u.username").list();
    }

    /** A user the caller may read: itself, or anyone for server administrators. */
    @Transactional
    public User get(String username) {
        Caller caller = access.caller();
        if (!caller.admin() && !caller.username().equals(username)) {
            throw ApiException.forbidden("Only server administrators may read other users");
        }
        return find(username);
    }

    /** The user of that name; 404 if there is none. */
    public User find(String username) {
        User user = User.findByUsername(username);
        if (user == null) {
            throw ApiException.notFound("User " + username + " not found");
        }
        return user;
    }
}

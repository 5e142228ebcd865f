package dev.fulcrum.accounts;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

/**
 * The member operations that teams and registries share: list, read, add or change, remove. Each subclass says how a
 * name finds its team or registry with the caller's role, and which {@link Roster} holds its members.
 */
abstract class Memberships<T> {

    @Inject
    Access access;

    @Inject
    Users users;

    /** The team or registry of that name with the caller's role, which must reach {@code required}. */
    abstract WithRole<T> scoped(String name, Role required);

    abstract Roster<?> roster(T owner);

    /** Names the team or registry in messages. */
    abstract String describe(String name);

    @Transactional
    public List<Membership> members(String name) {
        return roster(scoped(name, Role.VIEWER).value()).list();
    }

    @Transactional
    public Membership member(String name, String username) {
        return roster(scoped(name, Role.VIEWER).value()).get(users.find(username));
    }

    /** Adds the user with that role or changes its role (admins only); the last admin cannot be demoted. */
    @Transactional
    public Membership setMember(String name, String username, Role role) {
        return roster(scoped(name, Role.ADMIN).value()).set(users.find(username), role);
    }

    /** Removes a member (admins, or the member itself); the last admin cannot be removed. */
    @Transactional
    public void removeMember(String name, String username) {
        WithRole<T> owner = scoped(name, Role.VIEWER);
        if (!username.equals(access.caller().username())) {
            Access.require(owner.role(), Role.ADMIN, describe(name));
        }
        roster(owner.value()).remove(users.find(username));
    }
}

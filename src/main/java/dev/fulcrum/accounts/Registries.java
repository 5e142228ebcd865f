package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.AdvisoryLocks;
import dev.fulcrum.platform.ApiException;

/**
 * Organization-level registries. Any user may create one and becomes its first admin; a registry always keeps an admin.
 */
@ApplicationScoped
public class Registries {

    @Inject
    Access access;

    @Inject
    Users users;

    @Inject
    EntityManager em;

    @Transactional
    public Registry create(String name, String description, long creatorId) {
        Names.requireEntity(name, "body", "name");
        AdvisoryLocks.lock(em, AdvisoryLocks.REGISTRIES, name);
        if (Registry.findByName(name) != null) {
            throw ApiException.conflict("A registry named " + name + " exists");
        }
        Registry registry = new Registry();
        registry.name = name;
        registry.description = description;
        registry.createdBy = creatorId;
        registry.persist();
        roster(registry).set(User.findById(creatorId), Role.ADMIN);
        return registry;
    }

    /** The registries the caller belongs to; every registry for server administrators. */
    @Transactional
    public List<WithRole<Registry>> list() {
        Caller caller = access.caller();
        if (caller.admin()) {
            return Registry.<Registry> list("order by name").stream()
                    .map(registry -> new WithRole<>(registry, Role.ADMIN)).toList();
        }
        return em.createQuery("""
                select r, m.role from Registry r, RegistryMember m
                where m.registryId = r.id and m.userId = ?1 order by r.name""", Object[].class)
                .setParameter(1, caller.userId()).getResultStream()
                .map(row -> new WithRole<>((Registry) row[0], (Role) row[1])).toList();
    }

    @Transactional
    public WithRole<Registry> get(String name) {
        return registry(name, Role.VIEWER);
    }

    @Transactional
    public void delete(String name) {
        registry(name, Role.ADMIN).value().delete();
    }

    @Transactional
    public List<Membership> members(String name) {
        Registry registry = registry(name, Role.VIEWER).value();
        return em.createQuery("""
                select new dev.fulcrum.accounts.Membership(u.username, m.role, m.createdAt)
                from RegistryMember m, User u where u.id = m.userId and m.registryId = ?1 order by u.username""",
                Membership.class).setParameter(1, registry.id).getResultList();
    }

    @Transactional
    public Membership member(String name, String username) {
        return roster(registry(name, Role.VIEWER).value()).get(users.find(username));
    }

    /** Adds the user with that role or changes its role (registry admins); the last admin cannot be demoted. */
    @Transactional
    public Membership setMember(String name, String username, Role role) {
        Registry registry = registry(name, Role.ADMIN).value();
        User user = users.find(username);
        em.lock(registry, LockModeType.PESSIMISTIC_WRITE);
        return roster(registry).set(user, role);
    }

    /** Removes a member (registry admins, or the member itself); the last admin cannot be removed. */
    @Transactional
    public void removeMember(String name, String username) {
        WithRole<Registry> registry = registry(name, Role.VIEWER);
        if (!username.equals(access.caller().username())) {
            Access.require(registry.role(), Role.ADMIN, "registry " + name);
        }
        User user = users.find(username);
        em.lock(registry.value(), LockModeType.PESSIMISTIC_WRITE);
        roster(registry.value()).remove(user);
    }

    private static Roster<RegistryMember> roster(Registry registry) {
        return new Roster<>("registry " + registry.name, userId -> RegistryMember.find(registry.id, userId),
                userId -> RegistryMember.of(registry.id, userId),
                () -> RegistryMember.count("registryId = ?1 and role = ?2", registry.id, Role.ADMIN));
    }

    private WithRole<Registry> registry(String name, Role required) {
        Access.RegistryRef ref = access.registry(name, required);
        return new WithRole<>(Registry.findById(ref.registryId()), ref.role());
    }
}

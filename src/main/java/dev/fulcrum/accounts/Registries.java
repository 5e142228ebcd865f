package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
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
        AdvisoryLocks.lock(em, AdvisoryLocks.REGISTRIES, name);
        if (Registry.findByName(name) != null) {
            throw ApiException.conflict("A registry named " + name + " exists");
        }
        Registry registry = new Registry();
        registry.name = name;
        registry.description = description;
        registry.createdBy = creatorId;
        registry.persist();
        Roster.of(registry).founder(User.findById(creatorId));
        return registry;
    }

    /** The registries the caller belongs to; every registry for server administrators. */
    @Transactional
    @SuppressWarnings("unchecked")
    public List<WithRole<Registry>> list() {
        Caller caller = access.caller();
        if (caller.admin()) {
            return Registry.<Registry> list("order by name").stream()
                    .map(registry -> new WithRole<>(registry, Role.ADMIN)).toList();
        }
        return (List<WithRole<Registry>>) (List<?>) em.createQuery("""
                select new dev.fulcrum.accounts.WithRole(r, m.role) from Registry r, RegistryMember m
                where m.registryId = r.id and m.userId = ?1 order by r.name""", WithRole.class)
                .setParameter(1, caller.userId()).getResultList();
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
        return Roster.of(registry(name, Role.VIEWER).value()).list();
    }

    @Transactional
    public Membership member(String name, String username) {
        return Roster.of(registry(name, Role.VIEWER).value()).get(users.find(username));
    }

    /** Adds the user with that role or changes its role (registry admins); the last admin cannot be demoted. */
    @Transactional
    public Membership setMember(String name, String username, Role role) {
        Registry registry = registry(name, Role.ADMIN).value();
        return Roster.of(registry).set(users.find(username), role);
    }

    /** Removes a member (registry admins, or the member itself); the last admin cannot be removed. */
    @Transactional
    public void removeMember(String name, String username) {
        WithRole<Registry> registry = registry(name, Role.VIEWER);
        if (!username.equals(access.caller().username())) {
            Access.require(registry.role(), Role.ADMIN, "registry " + name);
        }
        Roster.of(registry.value()).remove(users.find(username));
    }

    private WithRole<Registry> registry(String name, Role required) {
        Access.RegistryRef ref = access.registry(name, required);
        return new WithRole<>(Registry.findById(ref.registryId()), ref.role());
    }
}

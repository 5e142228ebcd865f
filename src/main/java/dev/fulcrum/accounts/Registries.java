package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Organization-level registries. Any user may create one and becomes its first admin; a registry always keeps an admin.
 */
@ApplicationScoped
public class Registries extends Memberships<Registry> {

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
        return scoped(name, Role.VIEWER);
    }

    @Transactional
    public void delete(String name) {
        scoped(name, Role.ADMIN).value().delete();
    }

    @Override
    Roster<?> roster(Registry owner) {
        return Roster.of(owner);
    }

    @Override
    String describe(String name) {
        return "registry " + name;
    }

    @Override
    WithRole<Registry> scoped(String name, Role required) {
        Access.RegistryRef ref = access.registry(name, required);
        return new WithRole<>(Registry.findById(ref.registryId()), ref.role());
    }
}

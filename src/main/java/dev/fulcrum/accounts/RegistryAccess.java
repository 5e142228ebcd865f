package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.platform.ApiException;

/**
 * Who may do what in a registry: registry members have their role; server administrators are admins of every registry.
 * Unknown registry: 404; no or too small a role: 403.
 */
@ApplicationScoped
public class RegistryAccess {

    @Inject
    CurrentCaller current;

    @Inject
    EntityManager em;

    @Transactional
    public RegistryRef registry(String name, Role required) {
        Caller caller = current.get();
        List<?> rows = em.createNativeQuery("""
                select r.id, m.role from registries r
                left join registry_members m on m.registry_id = r.id and m.user_id = ?2
                where r.name = ?1""").setParameter(1, name).setParameter(2, caller.userId()).getResultList();
        if (rows.isEmpty()) {
            throw ApiException.notFound("Registry " + name + " not found");
        }
        Object[] row = (Object[]) rows.get(0);
        Role role = caller.admin() ? Role.ADMIN : row[1] == null ? null : Role.valueOf((String) row[1]);
        if (role == null) {
            throw ApiException.forbidden("You are not a member of registry " + name);
        }
        if (!role.atLeast(required)) {
            throw ApiException.forbidden("This needs the " + required.name().toLowerCase() + " role on registry " + name
                    + "; you are " + role.name().toLowerCase());
        }
        return new RegistryRef(((Number) row[0]).longValue(), name, role);
    }

    /** A registry and the caller's role on it. */
    public record RegistryRef(long registryId, String name, Role role) {
    }
}

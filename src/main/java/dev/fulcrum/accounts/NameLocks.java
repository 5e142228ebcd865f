package dev.fulcrum.accounts;

import jakarta.persistence.EntityManager;

/**
 * Serializes the creation of one name until the end of the transaction, across replicas, so that "the name is free"
 * stays true until the insert commits and two concurrent creations give one 201 and one 409 rather than a 500.
 */
final class NameLocks {

    /** Namespaces: users and teams share the entity names; registries have their own. */
    static final int ENTITIES = 1;
    static final int REGISTRIES = 2;

    private NameLocks() {
    }

    static void lock(EntityManager em, int namespace, String name) {
        em.createNativeQuery("select pg_advisory_xact_lock(?1, hashtext(?2))").setParameter(1, namespace)
                .setParameter(2, name).getSingleResult();
    }
}

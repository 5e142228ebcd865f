package dev.fulcrum.automations;

import java.time.OffsetDateTime;

import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.AdvisoryLocks;

/** What the services of this package share when they write their records: the database's clock and name locks. */
final class AutomationStorage {

    private AutomationStorage() {
    }

    /** The database's clock (now() of this transaction), as the columns' defaults use it. */
    static OffsetDateTime now(EntityManager em) {
        return em.createQuery("select offset datetime", OffsetDateTime.class).getSingleResult();
    }

    /**
     * Serializes, until the transaction ends and across replicas, the check that a name of {@code kind} is free in its
     * scope with the write that takes it: a concurrent create answers 409, not a unique violation.
     */
    static void lockName(EntityManager em, String kind, long scopeId, String name) {
        AdvisoryLocks.lock(em, AdvisoryLocks.AUTOMATION_NAMES, kind + ":" + scopeId + "/" + name);
    }
}

package dev.fulcrum.platform.database;

import jakarta.persistence.EntityManager;

/**
 * Transaction-scoped PostgreSQL advisory locks on a name within a namespace: they serialize, across replicas, the
 * check-then-insert of one name until the transaction ends, so that "the name is free" or "the next index is N" stays
 * true until the insert commits.
 */
public final class AdvisoryLocks {

    /** Users and teams share the entity names. */
    public static final int ENTITIES = 1;
    public static final int REGISTRIES = 2;
    /** Versions of one dataset: {@code projectId/objectId}. */
    public static final int DATASET_VERSIONS = 3;
    /** Links into one registry collection: {@code registryId/collection}. */
    public static final int REGISTRY_LINKS = 4;
    /** Names of team secrets, webhooks and automations: {@code kind:scopeId/name}. */
    public static final int AUTOMATION_NAMES = 20;
    /** Training models: {@code projectId/name} while registering, the model id while changing its checkpoints. */
    public static final int TRAINING_MODELS = 40;
    /** The live Tinker training clients of one entity (its name), while one more is counted and made. */
    public static final int TINKER_LIVE_MODELS = 41;
    /**
     * Backups under way (key 0): each backup holds it shared, as a session lock, from its database snapshot until its
     * last blob is written; the blob collector removes a blob only when it gets it exclusively, so no blob a backup's
     * snapshot names leaves the store before the backup has read it.
     */
    public static final int BACKUPS = 60;

    private AdvisoryLocks() {
    }

    public static void lock(EntityManager em, int namespace, String name) {
        em.createNativeQuery("select pg_advisory_xact_lock(?1, hashtext(?2))").setParameter(1, namespace)
                .setParameter(2, name).getSingleResult();
    }
}

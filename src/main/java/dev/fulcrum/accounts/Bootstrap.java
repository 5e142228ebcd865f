package dev.fulcrum.accounts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.jboss.logging.Logger;

import io.quarkus.runtime.StartupEvent;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.database.AdvisoryLocks;

/**
 * On the first start with an empty database, creates the administrator {@code admin} with the configured API key, or a
 * generated one that is logged this once. Later starts change nothing; replicas starting together create it once.
 */
@ApplicationScoped
public class Bootstrap {

    private static final Logger LOG = Logger.getLogger(Bootstrap.class);
    private static final String ADMIN = "admin";

    @Inject
    FulcrumConfig config;

    @Inject
    Users users;

    @Inject
    ApiKeys apiKeys;

    @Inject
    EntityManager em;

    @Transactional
    void onStart(@Observes StartupEvent start) {
        // The lock creating the user admin takes: replicas starting together look for users one after the other.
        AdvisoryLocks.lock(em, AdvisoryLocks.ENTITIES, ADMIN);
        if (User.count() > 0) {
            return;
        }
        User admin = users.create(ADMIN, null, true);
        if (config.bootstrapApiKey().isPresent() && !config.bootstrapApiKey().get().isBlank()) {
            apiKeys.store(admin.id, "bootstrap", config.bootstrapApiKey().get());
            LOG.info("Created administrator 'admin' with the API key from FULCRUM_BOOTSTRAP_API_KEY");
        } else {
            ApiKeys.Created key = apiKeys.create(admin.id, "bootstrap");
            LOG.infof("Created administrator 'admin'. Its API key, shown this once: %s", key.secret());
        }
    }
}

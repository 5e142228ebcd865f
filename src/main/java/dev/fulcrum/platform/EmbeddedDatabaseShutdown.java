package dev.fulcrum.platform;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;

import io.quarkus.runtime.ShutdownEvent;

/**
 * Stops the embedded PostgreSQL when the application stops: its postmaster is a daemon, not a child of this JVM, and
 * would otherwise outlive it. Observes late, after the application's own shutdown work.
 */
@ApplicationScoped
public class EmbeddedDatabaseShutdown {

    void onStop(@Observes @Priority(Interceptor.Priority.PLATFORM_AFTER) ShutdownEvent stop) {
        EmbeddedDatabase.current().ifPresent(EmbeddedDatabase::stop);
    }
}

package dev.fulcrum.platform.database;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.quarkus.runtime.ShutdownEvent;

/** Stops the embedded PostgreSQL cleanly when the application stops, after everything else has shut down. */
@ApplicationScoped
public class EmbeddedDatabaseLifecycle {

    void onStop(@Observes @Priority(Integer.MAX_VALUE) ShutdownEvent stop) {
        EmbeddedDatabase.current().ifPresent(EmbeddedDatabase::stop);
    }
}

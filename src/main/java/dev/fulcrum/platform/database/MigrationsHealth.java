package dev.fulcrum.platform.database;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Startup;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;

/**
 * The startup probe ({@code /q/health/started}, check {@value #NAME}): UP once the database (the embedded one when no
 * {@code quarkus.datasource.jdbc.url} is set) answers and every migration is applied. Fulcrum starts the embedded
 * database and migrates before the HTTP server listens, so the probe answers only then; this check says so explicitly,
 * and with what: the schema version and whether the database is embedded. Once UP it stays UP without reading the
 * database again (readiness watches the database from then on).
 */
@Startup
@ApplicationScoped
public class MigrationsHealth implements HealthCheck {

    public static final String NAME = "Database migrated";

    @Inject
    Flyway flyway;

    @Inject
    DatabaseHealth database;

    private volatile String migratedTo;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME).withData("embedded_database",
                EmbeddedDatabase.current().isPresent());
        if (migratedTo != null) {
            return response.up().withData("schema_version", migratedTo).build();
        }
        DatabaseHealth.Result answered = database.check();
        if (!answered.up()) {
            return response.down().withData("error", answered.error()).build();
        }
        MigrationInfoService info = flyway.info();
        int pending = info.pending().length;
        MigrationInfo current = info.current();
        String version = current == null || current.getVersion() == null ? "none" : current.getVersion().toString();
        if (pending > 0) {
            return response.down().withData("schema_version", version).withData("pending_migrations", pending).build();
        }
        migratedTo = version;
        return response.up().withData("schema_version", version).build();
    }
}

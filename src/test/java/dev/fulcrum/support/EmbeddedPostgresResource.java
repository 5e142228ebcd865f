package dev.fulcrum.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import dev.fulcrum.platform.database.EmbeddedDatabase;

/** A real PostgreSQL for the test run, in a temporary data directory: no Docker, no system service. */
public class EmbeddedPostgresResource implements QuarkusTestResourceLifecycleManager {

    public static final String ADMIN_KEY = "fk_test-admin-key-0123456789";

    private EmbeddedDatabase database;
    private Path dataDir;

    @Override
    public Map<String, String> start() {
        try {
            dataDir = Files.createTempDirectory("fulcrum-test");
            database = EmbeddedDatabase.start(dataDir.resolve("postgres"), 0, false);
            return Map.of("quarkus.datasource.jdbc.url", database.jdbcUrl(), "quarkus.datasource.username",
                    EmbeddedDatabase.USER, "fulcrum.data-dir", dataDir.toString(), "fulcrum.bootstrap-api-key",
                    ADMIN_KEY);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
        if (database != null) {
            database.stop();
        }
        // a test run starts the application many times: each left its database and blobs behind (about 200 MB)
        if (dataDir != null) {
            try (Stream<Path> paths = Files.walk(dataDir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

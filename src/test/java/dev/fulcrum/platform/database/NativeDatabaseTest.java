package dev.fulcrum.platform.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.quarkus.runtime.ExecutionMode;
import io.quarkus.runtime.ImageMode;
import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigValue;

/**
 * A native executable, and a JVM build without the binaries (the cloud image), carry no PostgreSQL: without
 * quarkus.datasource.jdbc.url they refuse to start with one message that says what to configure, instead of failing to
 * unpack binaries that are not there.
 */
class NativeDatabaseTest {

    private final EmbeddedDatabaseConfigSourceFactory.Source source = new EmbeddedDatabaseConfigSourceFactory.Source(
            Path.of("target", "native-database-test", "postgres"), 0);

    @Test
    void aNativeExecutableWithoutADatabaseUrlSaysAnExternalDatabaseIsRequired() {
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> source.url(ExecutionMode.RUNTIME_INIT, ImageMode.NATIVE_RUN, false));

        assertEquals(EmbeddedDatabaseConfigSourceFactory.EXTERNAL_DATABASE_REQUIRED, refused.getMessage());
        assertTrue(refused.getMessage().contains("quarkus.datasource.jdbc.url"), refused.getMessage());
        assertTrue(refused.getMessage().contains("QUARKUS_DATASOURCE_JDBC_URL"), refused.getMessage());
        assertThrows(IllegalStateException.class, () -> source.url(ExecutionMode.RUNNING, ImageMode.NATIVE_RUN, true));
    }

    @Test
    void aJvmBuildWithoutTheBinariesSaysTheSame() {
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> source.url(ExecutionMode.RUNTIME_INIT, ImageMode.JVM, false));

        assertEquals(EmbeddedDatabaseConfigSourceFactory.EXTERNAL_DATABASE_REQUIRED, refused.getMessage());
    }

    @Test
    void theLaptopDistributionsBinariesAreOnTheTestClassPath() {
        assertTrue(EmbeddedDatabaseConfigSourceFactory.Source.binariesPresent());
    }

    @Test
    void nothingStartsOrFailsWhileTheNativeImageIsBuiltOrInitialized() {
        assertNull(source.url(ExecutionMode.STATIC_INIT, ImageMode.NATIVE_BUILD, false));
        assertNull(source.url(ExecutionMode.STATIC_INIT, ImageMode.NATIVE_RUN, false));
        assertNull(source.url(ExecutionMode.UNSET, ImageMode.JVM, true));
    }

    @Test
    void nothingStartsWhileTheBuildRecordsTheClassArchive() {
        // the container image's build starts the application with this property to archive its classes (AppCDS)
        System.setProperty("quarkus.appcds.generate", "true");
        try {
            assertNull(source.url(ExecutionMode.RUNTIME_INIT, ImageMode.JVM, true));
            assertNull(source.url(ExecutionMode.RUNNING, ImageMode.JVM, true));
        } finally {
            System.clearProperty("quarkus.appcds.generate");
        }
    }

    @Test
    void theSourceStandsBackWhenADatabaseUrlIsConfigured() {
        EmbeddedDatabaseConfigSourceFactory factory = new EmbeddedDatabaseConfigSourceFactory();
        ConfigSourceContext context = new ConfigSourceContext() {
            @Override
            public ConfigValue getValue(String name) {
                return EmbeddedDatabaseConfigSourceFactory.URL.equals(name)
                        ? ConfigValue.builder().withName(name).withValue("jdbc:postgresql://db:5432/fulcrum").build()
                        : null;
            }

            @Override
            public Iterator<String> iterateNames() {
                return List.of(EmbeddedDatabaseConfigSourceFactory.URL).iterator();
            }
        };

        assertFalse(factory.getConfigSources(context).iterator().hasNext());
    }
}

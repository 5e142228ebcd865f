package dev.fulcrum.platform.database;

import java.util.List;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.quarkus.runtime.ApplicationLifecycleManager;
import io.quarkus.runtime.ExecutionMode;
import io.quarkus.runtime.ImageMode;
import io.quarkus.runtime.annotations.StaticInitSafe;
import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;

/**
 * Begins to start the embedded PostgreSQL (of {@link EmbeddedDatabaseConfigSourceFactory}) while a JVM initializes the
 * application statically, the first thing it does at launch: unpacking the binaries' archive and PostgreSQL's own start
 * then overlap the rest of the start-up, and the first read of the datasource at run time waits for what is left.
 * Supplies no configuration; only this factory is read at static initialization ({@link StaticInitSafe}).
 */
@StaticInitSafe
public class EmbeddedDatabaseEarlyStart implements ConfigSourceFactory {

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (!EmbeddedDatabaseConfigSourceFactory
                .configured(context.getValue(EmbeddedDatabaseConfigSourceFactory.URL))) {
            start(ExecutionMode.current(), ImageMode.current(),
                    EmbeddedDatabaseConfigSourceFactory.Source.binariesPresent(), context);
        }
        return List.of();
    }

    static void start(ExecutionMode execution, ImageMode image, boolean binariesPresent, ConfigSourceContext context) {
        // not while the build records the classes of the AppCDS archive (a JVM that stops after static initialization)
        if (execution == ExecutionMode.STATIC_INIT && image == ImageMode.JVM && binariesPresent
                && !ApplicationLifecycleManager.isAppCDSGeneration()) {
            EmbeddedDatabase.startEarly(EmbeddedDatabaseConfigSourceFactory.directory(context),
                    EmbeddedDatabaseConfigSourceFactory.port(context));
        }
    }
}

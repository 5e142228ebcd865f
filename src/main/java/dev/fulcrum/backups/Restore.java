package dev.fulcrum.backups;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import javax.sql.DataSource;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.io.input.CloseShieldInputStream;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.flywaydb.core.api.configuration.Configuration;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.jboss.logging.Logger;

import io.quarkus.flyway.FlywayConfigurationCustomizer;

import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.database.JdbcTransactions;
import dev.fulcrum.platform.database.NativeSql;

/**
 * Restores a backup ({@link BackupManifest}) at start, when {@code fulcrum.restore.from} names its archive: before
 * Flyway migrates, on an empty database, it migrates to the backup's schema version, puts the blobs into the store,
 * loads every table and sequence in one transaction, and lets Flyway go on to this release's schema, so a backup of an
 * earlier release restores into a later one. The start after it, with the setting still there, finds the backup in
 * {@code restored_backups} and starts normally; any other database that is not empty is refused, as is an archive that
 * is incomplete, from a later release, or sealed with another master key. Restores take a lock, so one replica restores
 * and the others wait, then find it done.
 */
@Singleton
public class Restore implements FlywayConfigurationCustomizer, Callback {

    private static final Logger LOG = Logger.getLogger(Restore.class);
    /** The key, in {@link AdvisoryLocks#BACKUPS}, that one restore holds. */
    private static final int RESTORING = 1;
    private static final String HISTORY = "flyway_schema_history";

    @ConfigProperty(name = "fulcrum.restore.from")
    Optional<Path> from;

    @Inject
    BlobStore blobs;

    @Inject
    SecretCipher cipher;

    private Connection lock;
    private BackupManifest restored;

    @Override
    public void customize(FluentConfiguration configuration) {
        if (from.isPresent()) {
            Callback[] callbacks = Arrays.copyOf(configuration.getCallbacks(), configuration.getCallbacks().length + 1);
            callbacks[callbacks.length - 1] = this;
            configuration.callbacks(callbacks);
        }
    }

    @Override
    public boolean supports(Event event, Context context) {
        return event == Event.BEFORE_MIGRATE || event == Event.AFTER_MIGRATE || event == Event.AFTER_MIGRATE_ERROR;
    }

    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return true;
    }

    @Override
    public String getCallbackName() {
        return "fulcrum-restore";
    }

    @Override
    public void handle(Event event, Context context) {
        DataSource dataSource = context.getConfiguration().getDataSource();
        try {
            if (event == Event.BEFORE_MIGRATE) {
                lock = NativeSql.session(dataSource);
                BackupStatements.lock(lock, RESTORING);
                restore(context.getConfiguration(), dataSource);
                return;
            }
            if (event == Event.AFTER_MIGRATE && restored != null) {
                NativeSql.pooled(dataSource, connection -> BackupStatements.recordRestored(connection, restored.id(),
                        restored.madeAt(), restored.schemaVersion()));
                LOG.infof("Backup %s (made %s) restored and migrated to this release's schema", restored.id(),
                        restored.madeAt());
            }
            release();
        } catch (SQLException e) {
            release();
            throw new FlywayException("Restoring " + from.orElseThrow() + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            release();
            throw e;
        }
    }

    private void restore(Configuration configuration, DataSource dataSource) throws SQLException {
        Path archive = from.orElseThrow();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(
                new BufferedInputStream(Files.newInputStream(archive), 1 << 16))) {
            BackupManifest manifest = manifest(tar, archive);
            List<String> present = present(dataSource);
            if (!present.isEmpty()) {
                if (alreadyRestored(dataSource, manifest)) {
                    LOG.infof("Backup %s was restored into this database before: starting normally (%s can be unset)",
                            manifest.id(), "fulcrum.restore.from");
                    return;
                }
                throw refused("the database is not empty (it has "
                        + String.join(", ", present.subList(0, Math.min(5, present.size())))
                        + (present.size() > 5 ? ", ..." : "")
                        + "). Restore only into an empty database: a new data directory,"
                        + " or an external database with nothing in its schema. Unset fulcrum.restore.from to start"
                        + " on this one");
            }
            checkKey(manifest);
            migrateTo(configuration, manifest);
            long started = System.nanoTime();
            LOG.infof("Restoring backup %s (made %s, schema version %s) from %s", manifest.id(), manifest.madeAt(),
                    manifest.schemaVersion(), archive);
            long[] putBlobs = putBlobs(tar, manifest);
            long rows = JdbcTransactions.run(dataSource, connection -> load(connection, tar, manifest));
            restored = manifest;
            LOG.infof("Restored backup %s: %d tables, %d rows, %d blobs (%d bytes), in %d ms", manifest.id(),
                    manifest.tables().size(), rows, putBlobs[0], putBlobs[1],
                    (System.nanoTime() - started) / 1_000_000);
        } catch (IOException | RuntimeException e) {
            if (e instanceof FlywayException flyway) {
                throw flyway;
            }
            throw refused("it could not be read (" + e.getMessage() + "). If tables were made before this, the"
                    + " database is no longer empty: start again on a new, empty one");
        }
    }

    private BackupManifest manifest(TarArchiveInputStream tar, Path archive) throws IOException {
        TarArchiveEntry first = tar.getNextEntry();
        if (first == null || !first.getName().equals(BackupManifest.ENTRY)) {
            throw refused("it is not a Fulcrum backup (its first entry is not " + BackupManifest.ENTRY + ")");
        }
        BackupManifest manifest = BackupManifest.read(tar.readAllBytes());
        if (manifest.format() != BackupManifest.FORMAT) {
            throw refused("its format " + manifest.format() + " is not " + BackupManifest.FORMAT
                    + ", the one this release reads");
        }
        return manifest;
    }

    private void checkKey(BackupManifest manifest) {
        try {
            String opened = cipher.open(Base64.getDecoder().decode(manifest.keyCheck()),
                    BackupManifest.KEY_CHECK_CONTEXT);
            if (opened.equals(BackupManifest.keyCheckText(manifest.id()))) {
                return;
            }
        } catch (IllegalStateException | IllegalArgumentException e) {
            // answered below
        }
        throw refused("it was made with another master key, which its sealed values (team secrets, model API keys,"
                + " pending webhook deliveries) need. Start with that key: fulcrum.secrets.master-key, or its file"
                + " <data-dir>/secrets/master.key");
    }

    /** Migrates the empty database to the backup's schema version, with no callback (this one included). */
    private void migrateTo(Configuration configuration, BackupManifest manifest) {
        MigrationVersion version = MigrationVersion.fromVersion(manifest.schemaVersion());
        Flyway plain = new FluentConfiguration(configuration.getClassLoader()).configuration(configuration)
                .callbacks(new Callback[0]).skipDefaultCallbacks(true).load();
        boolean known = Stream.of(plain.info().all()).map(MigrationInfo::getVersion)
                .anyMatch(candidate -> version.equals(candidate));
        if (!known) {
            throw refused("its schema version " + manifest.schemaVersion() + " is not one of this release's"
                    + " migrations: it comes from a later release. Restore it with that release, or a later one");
        }
        new FluentConfiguration(configuration.getClassLoader()).configuration(configuration).callbacks(new Callback[0])
                .skipDefaultCallbacks(true).target(version).load().migrate();
    }

    /** The blob entries, each stored under its digest (checked); answers how many and their bytes. */
    private long[] putBlobs(TarArchiveInputStream tar, BackupManifest manifest) throws IOException {
        long count = 0;
        long bytes = 0;
        for (long i = 0; i < manifest.blobs(); i++) {
            TarArchiveEntry entry = tar.getNextEntry();
            if (entry == null || !entry.getName().startsWith("blobs/")) {
                throw new IOException("the archive ends before its " + manifest.blobs() + " blobs");
            }
            String digest = entry.getName().substring("blobs/".length());
            BlobStore.Blob blob = blobs.put(CloseShieldInputStream.wrap(tar), Long.MAX_VALUE);
            if (!blob.digest().equals(digest)) {
                throw new IOException("the blob " + digest + " holds other bytes (" + blob.digest() + ")");
            }
            count++;
            bytes += blob.size();
        }
        return new long[] { count, bytes };
    }

    /** In one transaction: the tables emptied, each loaded in order, the sequences set; answers the rows. */
    private long load(Connection connection, TarArchiveInputStream tar, BackupManifest manifest) throws SQLException {
        List<String> present = Backups.tablesInOrder(connection);
        List<String> listed = manifest.tables().stream().map(BackupManifest.Table::name).toList();
        if (!new HashSet<>(present).equals(new HashSet<>(listed))) {
            List<String> missing = new ArrayList<>(listed);
            missing.removeAll(present);
            List<String> extra = new ArrayList<>(present);
            extra.removeAll(listed);
            throw refused("its tables are not those of schema version " + manifest.schemaVersion() + " (missing here: "
                    + missing + ", not in the backup: " + extra + ")");
        }
        BackupStatements.truncate(connection, listed);
        long rows = 0;
        try {
            for (BackupManifest.Table table : manifest.tables()) {
                TarArchiveEntry entry = tar.getNextEntry();
                if (entry == null || !entry.getName().equals(table.entry())) {
                    throw new IOException("the archive ends, or holds " + (entry == null ? "nothing" : entry.getName())
                            + ", where " + table.entry() + " should be");
                }
                long copied = BackupStatements.copyIn(connection, table.name(), table.columns(),
                        CloseShieldInputStream.wrap(tar));
                if (copied != table.rows()) {
                    throw new IOException(table.name() + " has " + copied + " rows, not " + table.rows());
                }
                rows += copied;
            }
            if (tar.getNextEntry() != null) {
                throw new IOException("the archive holds more than its manifest lists");
            }
        } catch (IOException e) {
            throw new SQLException(e.getMessage(), e);
        }
        for (BackupManifest.Sequence sequence : manifest.sequences()) {
            BackupStatements.setSequence(connection, sequence);
        }
        return rows;
    }

    /**
     * The tables, views and sequences of the schema, by name; Flyway's history counts only once a migration is in it
     * (Flyway makes the empty table before it calls back).
     */
    private static List<String> present(DataSource dataSource) throws SQLException {
        return NativeSql.pooled(dataSource, connection -> {
            List<String> names = new ArrayList<>(BackupStatements.relations(connection));
            if (names.contains(HISTORY) && BackupStatements.empty(connection, HISTORY)) {
                names.remove(HISTORY);
            }
            return names;
        });
    }

    private static boolean alreadyRestored(DataSource dataSource, BackupManifest manifest) throws SQLException {
        return NativeSql.pooled(dataSource, connection -> BackupStatements.restored(connection, manifest.id()));
    }

    /** The refusal, logged in one line (Quarkus's own report of the failed start follows, with the same text). */
    private FlywayException refused(String why) {
        String message = "Not restoring " + from.orElseThrow() + ": " + why;
        LOG.error(message);
        return new FlywayException(message);
    }

    private void release() {
        if (lock == null) {
            return;
        }
        try (Connection held = lock) {
            BackupStatements.unlock(held, RESTORING);
        } catch (SQLException e) {
            LOG.warnf("Could not release the restore lock (the connection's end releases it): %s", e.getMessage());
        }
        lock = null;
    }
}

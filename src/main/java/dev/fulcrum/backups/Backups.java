package dev.fulcrum.backups;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.io.file.PathUtils;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;

import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.database.JdbcTransactions;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.StorageFull;

/**
 * Makes backups ({@link BackupManifest} says what one holds). {@link #prepare} takes the backups' lock
 * ({@link AdvisoryLocks#BACKUPS}, shared, on a connection held until the archive is written), copies every table out of
 * one repeatable-read snapshot into files under {@code <data-dir>/backups-spool}, and lists the blob store; then
 * {@link Prepared#write} streams the archive and lets everything go. Tables are spooled because a tar entry states its
 * size before its bytes; blobs are read from the store as they are written.
 */
@ApplicationScoped
@Startup
public class Backups {

    private static final Logger LOG = Logger.getLogger(Backups.class);

    @Inject
    DataSource dataSource;

    @Inject
    BlobStore blobs;

    @Inject
    SecretCipher cipher;

    @Inject
    FulcrumConfig config;

    @Inject
    MeterRegistry registry;

    private Counter written;
    private Counter failed;
    private Timer writing;
    /** When this replica last wrote a whole archive, in epoch seconds (0: not since it started). */
    private final AtomicLong lastWritten = new AtomicLong();

    /** On the metrics page from the start (at zero), so that an alert on a missing backup sees them. */
    @PostConstruct
    void meters() {
        written = outcome("written");
        failed = outcome("failed");
        writing = Timer.builder("fulcrum.backup.duration")
                .description("Time to write a backup archive, from the snapshot taken to its last byte")
                .register(registry);
        Gauge.builder("fulcrum.backup.last.written.timestamp", lastWritten, AtomicLong::get)
                .description("When this replica last wrote a whole backup archive (epoch seconds; 0: not yet)")
                .baseUnit("seconds").register(registry);
    }

    /** A snapshot copied out and the blobs listed, with the lock still held: write it, once. */
    public final class Prepared implements AutoCloseable {

        private final BackupManifest manifest;
        private final Map<String, Long> blobSizes;
        private final Path spool;
        private final Connection lock;
        private boolean closed;

        private Prepared(BackupManifest manifest, Map<String, Long> blobSizes, Path spool, Connection lock) {
            this.manifest = manifest;
            this.blobSizes = blobSizes;
            this.spool = spool;
            this.lock = lock;
        }

        public BackupManifest manifest() {
            return manifest;
        }

        /** Writes the archive to {@code out}, then releases the lock and the spooled tables. */
        public void write(OutputStream out) throws IOException {
            long started = System.nanoTime();
            boolean whole = false;
            try (TarArchiveOutputStream tar = new TarArchiveOutputStream(out)) {
                tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
                tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
                byte[] json = manifest.json();
                entry(tar, BackupManifest.ENTRY, json.length);
                tar.write(json);
                tar.closeArchiveEntry();
                for (Map.Entry<String, Long> blob : blobSizes.entrySet()) {
                    entry(tar, BackupManifest.blobEntry(blob.getKey()), blob.getValue());
                    try (InputStream in = blobs.open(blob.getKey(), 0, blob.getValue())) {
                        in.transferTo(tar);
                    }
                    tar.closeArchiveEntry();
                }
                for (BackupManifest.Table table : manifest.tables()) {
                    Path file = spool.resolve(table.name() + ".copy");
                    entry(tar, table.entry(), Files.size(file));
                    Files.copy(file, tar);
                    tar.closeArchiveEntry();
                }
                tar.finish();
                whole = true;
            } finally {
                close();
                (whole ? written : failed).increment();
            }
            writing.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            lastWritten.set(Instant.now().getEpochSecond());
            LOG.infof("Backup %s written: %d tables, %d rows, %d blobs (%d bytes), in %d ms", manifest.id(),
                    manifest.tables().size(), manifest.tables().stream().mapToLong(BackupManifest.Table::rows).sum(),
                    manifest.blobs(), manifest.blobBytes(), (System.nanoTime() - started) / 1_000_000);
        }

        /** Releases the lock and removes the spooled tables (also when the archive was never written). */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            release(lock);
            deleteTree(spool);
        }
    }

    private Counter outcome(String outcome) {
        return Counter.builder("fulcrum.backups").tag("outcome", outcome)
                .description("Backup archives made on this replica, by outcome").register(registry);
    }

    /** Takes the lock, copies the snapshot out and lists the blobs. */
    public Prepared prepare() {
        UUID id = UUID.randomUUID();
        Path spool = config.dataDir().resolve("backups-spool").resolve(id.toString());
        Connection lock = null;
        try {
            lock = NativeSql.session(dataSource);
            BackupStatements.lockShared(lock);
            Files.createDirectories(spool);
            BackupManifest copied = JdbcTransactions.run(dataSource, connection -> snapshot(connection, id, spool));
            Map<String, Long> listed = new LinkedHashMap<>();
            blobs.list(blob -> listed.put(blob.digest(), blob.size()));
            long bytes = listed.values().stream().mapToLong(Long::longValue).sum();
            return new Prepared(copied.withBlobs(listed.size(), bytes), listed, spool, lock);
        } catch (SQLException | IOException | RuntimeException e) {
            release(lock);
            deleteTree(spool);
            failed.increment();
            if (StorageFull.noSpace(e)) { // a 507 naming the spool's directory, the operator's to free
                throw new UncheckedIOException(new StorageFull.NoSpace(spool.getParent().toString(),
                        "the backup spool, <fulcrum.data-dir>/backups-spool", e));
            }
            if (e instanceof IOException io) {
                throw new UncheckedIOException(io);
            }
            if (e instanceof SQLException sql) {
                throw new IllegalStateException("Backup failed: " + sql.getMessage(), sql);
            }
            throw (RuntimeException) e;
        }
    }

    /** In the snapshot's transaction: the schema version, every table copied to the spool, every sequence. */
    private BackupManifest snapshot(Connection connection, UUID id, Path spool) throws SQLException {
        BackupStatements.snapshot(connection);
        OffsetDateTime madeAt = OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MILLIS);
        String version = BackupStatements.schemaVersion(connection)
                .orElseThrow(() -> new IllegalStateException("The database has no migration applied"));
        List<BackupManifest.Table> tables = new ArrayList<>();
        for (String table : tablesInOrder(connection)) {
            List<String> columns = BackupStatements.columns(connection, table);
            Path file = spool.resolve(table + ".copy");
            try (OutputStream out = Files.newOutputStream(file)) {
                long rows = BackupStatements.copyOut(connection, table, columns, out);
                tables.add(new BackupManifest.Table(table, columns, rows));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        List<BackupManifest.Sequence> sequences = new ArrayList<>();
        for (String sequence : BackupStatements.sequenceNames(connection)) {
            sequences.add(BackupStatements.sequence(connection, sequence));
        }
        String keyCheck = Base64.getEncoder()
                .encodeToString(cipher.seal(BackupManifest.keyCheckText(id), BackupManifest.KEY_CHECK_CONTEXT));
        return new BackupManifest(BackupManifest.FORMAT, id, madeAt, version, keyCheck, tables, sequences, 0, 0);
    }

    /**
     * The tables of the schema but Flyway's history, each after the tables its foreign keys name (its own name aside),
     * by name among equals: the order in which a restore can load them with every constraint checked.
     */
    static List<String> tablesInOrder(Connection connection) throws SQLException {
        List<String> names = BackupStatements.tableNames(connection);
        Map<String, TreeSet<String>> needs = new HashMap<>();
        names.forEach(name -> needs.put(name, new TreeSet<>()));
        BackupStatements.foreignKeys(connection).forEach(edge -> {
            if (!edge.get(0).equals(edge.get(1)) && needs.containsKey(edge.get(0))) {
                needs.get(edge.get(0)).add(edge.get(1));
            }
        });
        List<String> ordered = new ArrayList<>();
        TreeSet<String> left = new TreeSet<>(names);
        while (!left.isEmpty()) {
            String next = left.stream().filter(name -> ordered.containsAll(needs.get(name))).findFirst()
                    .orElseThrow(() -> new IllegalStateException("Foreign keys form a cycle among " + left));
            ordered.add(next);
            left.remove(next);
        }
        return ordered;
    }

    private static void entry(TarArchiveOutputStream tar, String name, long size) throws IOException {
        TarArchiveEntry entry = new TarArchiveEntry(name);
        entry.setSize(size);
        entry.setMode(0600);
        tar.putArchiveEntry(entry);
    }

    private static void release(Connection lock) {
        if (lock == null) {
            return;
        }
        try (lock) {
            BackupStatements.unlockShared(lock);
        } catch (SQLException | RuntimeException e) {
            LOG.warnf("Could not release the backups' lock (the connection's end releases it): %s", e.getMessage());
        }
    }

    private static void deleteTree(Path dir) {
        try {
            if (Files.exists(dir)) {
                PathUtils.deleteDirectory(dir);
            }
        } catch (IOException e) {
            LOG.warnf("Could not remove the backup spool %s: %s", dir, e.getMessage());
        }
    }
}

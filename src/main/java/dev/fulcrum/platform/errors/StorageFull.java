package dev.fulcrum.platform.errors;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.quarkus.runtime.Startup;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * A write the server has no room for: the file system under a directory it writes (the blob store, the S3 store's
 * upload spool, the multipart spool, the checkpoint exports) answered {@code ENOSPC} or {@code EDQUOT}, or PostgreSQL
 * answered SQLState {@code 53100} (disk_full) or {@code 53000} (insufficient_resources). Every door refuses such a
 * request with a 507 in its own shape ({@link ApiException.Kind#STORAGE_FULL}); the writers delete what they had
 * written of it, so nothing half made stays. The operator reads one log line per refusal saying what is full and what
 * to free, and the counter {@code fulcrum.storage.full} (tag {@code store}: {@code files} or {@code database}).
 */
public final class StorageFull {

    /** What the client reads. */
    public static final String MESSAGE = "The server's storage is full: nothing of this request was stored. "
            + "Retry once the server's operator has freed space";

    private static final Logger LOG = Logger.getLogger(StorageFull.class);

    private StorageFull() {
    }

    /** The refusals' counters, on the metrics page from the start (at zero), so that an alert sees them rise. */
    @ApplicationScoped
    @Startup
    static class Meters {

        @Inject
        MeterRegistry registry;

        @PostConstruct
        void register() {
            for (String store : List.of("files", "database")) {
                Counter.builder(METER).tag("store", store)
                        .description("Requests refused with 507 because a disk the server writes to is full")
                        .register(registry);
            }
        }
    }

    private static final String METER = "fulcrum.storage.full";

    /**
     * A write of the server's own that found no space: names where to free space (a directory, a bucket) and the
     * setting that chose it.
     */
    public static final class NoSpace extends IOException {
        private final String where;
        private final String setting;

        public NoSpace(String where, String setting, Throwable cause) {
            super("No space left in " + where + " (" + setting + "): " + cause.getMessage(), cause);
            this.where = where;
            this.setting = setting;
        }

        public String where() {
            return where;
        }

        public String setting() {
            return setting;
        }
    }

    /**
     * {@code e} as a {@link NoSpace} naming {@code directory} when it says the file system is full; {@code e} itself
     * otherwise, to be thrown as it was.
     */
    public static IOException named(Path directory, String setting, IOException e) {
        return e instanceof NoSpace || !noSpace(e) ? e : new NoSpace(directory.toString(), setting, e);
    }

    /** Whether {@code e} or one of its causes is a file system's "no space left" or "quota exceeded". */
    public static boolean noSpace(Throwable e) {
        for (Throwable t : chain(e)) {
            if (t instanceof IOException io
                    && (says(io.getMessage()) || io instanceof FileSystemException fs && says(fs.getReason()))) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code e} or one of its causes is PostgreSQL's disk_full (53100) or insufficient_resources (53000). */
    public static boolean databaseFull(Throwable e) {
        return databaseError(e) != null;
    }

    private static SQLException databaseError(Throwable e) {
        for (Throwable t : chain(e)) {
            if (t instanceof SQLException sql
                    && ("53100".equals(sql.getSQLState()) || "53000".equals(sql.getSQLState()))) {
                return sql;
            }
        }
        return null;
    }

    private static boolean says(String message) {
        return message != null
                && (message.contains("No space left on device") || message.contains("Disk quota exceeded"));
    }

    /**
     * The refusal of {@code request} (e.g. {@code PUT /path}) when {@code e} says the storage is full, logged once with
     * what the operator should do; null when {@code e} is another failure.
     */
    public static ApiException refusal(Throwable e, String request) {
        NoSpace named = find(e, NoSpace.class);
        SQLException database = named == null ? databaseError(e) : null;
        if (named == null && database == null && !noSpace(e)) {
            return null;
        }
        String store;
        if (named != null) {
            store = "files";
            LOG.errorf(
                    "Refused %s: no space left in %s (%s); nothing was stored. Free space there (or grow the "
                            + "volume); the same request then succeeds. %s",
                    request, named.where(), named.setting(),
                    named.getCause() == null ? "" : named.getCause().getMessage());
        } else if (database != null) {
            store = "database";
            LOG.errorf("Refused %s: the database has no room (PostgreSQL SQLState %s: %s); nothing was stored. Free "
                    + "space on the database's volume (the embedded database's is <fulcrum.data-dir>/postgres) or "
                    + "grow it; the same request then succeeds", request, database.getSQLState(),
                    oneLine(database.getMessage()));
        } else {
            store = "files";
            LOG.errorf(
                    "Refused %s: no space left on a device the server writes to (%s); nothing was stored. Free "
                            + "space where the server writes (or grow the volume): %s; the same request then succeeds",
                    request, firstMessage(e), directories());
        }
        Metrics.globalRegistry.counter(METER, "store", store).increment();
        return ApiException.storageFull(MESSAGE);
    }

    /** The directories the server writes to on a request, as configured, each with its setting. */
    private static String directories() {
        Config config = ConfigProvider.getConfig();
        String data = config.getOptionalValue("fulcrum.data-dir", String.class).orElse(FulcrumConfig.DEFAULT_DATA_DIR);
        return "the multipart spool "
                + config.getOptionalValue("quarkus.http.body.uploads-directory", String.class)
                        .orElse(System.getProperty("java.io.tmpdir") + "/uploads")
                + " (quarkus.http.body.uploads-directory), the blob store "
                + config.getOptionalValue("fulcrum.artifacts.blob-dir", String.class).orElse(data + "/blobs")
                + " (fulcrum.artifacts.blob-dir), the data directory " + data + " (fulcrum.data-dir)";
    }

    /** PostgreSQL's message with its hint and location lines joined: the refusal is one log line. */
    private static String oneLine(String message) {
        return String.valueOf(message).replaceAll("\\s*\\R\\s*", " ");
    }

    private static String firstMessage(Throwable e) {
        for (Throwable t : chain(e)) {
            if (says(t.getMessage()) || t instanceof FileSystemException fs && says(fs.getReason())) {
                return t.getMessage();
            }
        }
        return String.valueOf(e.getMessage());
    }

    private static <T extends Throwable> T find(Throwable e, Class<T> type) {
        for (Throwable t : chain(e)) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /** {@code e}, its causes and what they suppressed (a rollback's), each once. */
    private static Iterable<Throwable> chain(Throwable e) {
        Set<Throwable> seen = new LinkedHashSet<>(); // throwables are equal only to themselves
        collect(e, seen, 0);
        return seen;
    }

    private static void collect(Throwable e, Set<Throwable> seen, int depth) {
        if (e == null || depth > 32 || !seen.add(e)) {
            return;
        }
        if (e instanceof SQLException sql && sql.getNextException() != null) {
            collect(sql.getNextException(), seen, depth + 1);
        }
        collect(e.getCause(), seen, depth + 1);
        for (Throwable suppressed : e.getSuppressed()) {
            collect(suppressed, seen, depth + 1);
        }
    }
}

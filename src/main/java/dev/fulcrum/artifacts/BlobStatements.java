package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The SQL of stored blobs (tables {@code blob_md5s}, {@code blob_puts}); {@link BlobChecksums} and
 * {@link BlobCollector} call it with their entity manager, in their transactions. It also writes the collector's
 * question of whether anything uses a blob, from the conditions the {@link BlobReferences} beans give.
 */
final class BlobStatements {

    private BlobStatements() {
    }

    // MD5s ---------------------------------------------------------------------------------------------------------

    /** Puts the known MD5s of the blobs (by digest) into {@code found}. */
    static void md5s(EntityManager em, List<String> digests, Map<String, String> found) {
        NativeSql.list(em, "select digest, md5 from blob_md5s where digest = any(cast(?1 as text[]))",
                row -> found.put(row.string(0), row.string(1)), NativeSql.textArray(digests));
    }

    /** Keeps the MD5 of a blob, unless one is kept. */
    static void keepMd5(EntityManager em, String digest, String md5) {
        NativeSql.update(em, "insert into blob_md5s (digest, md5) values (?1, ?2) on conflict do nothing", digest, md5);
    }

    // the collector ------------------------------------------------------------------------------------------------

    /** Marks a blob as written now. */
    static void written(EntityManager em, String digest) {
        NativeSql.update(em, """
                insert into blob_puts (digest, last_put) values (?1, now())
                on conflict (digest) do update set last_put = now()""", digest);
    }

    /** Takes the backups' lock for this transaction, unless a backup holds it (shared): false then. */
    static boolean noBackupRunning(EntityManager em) {
        return NativeSql.first(em, "select pg_try_advisory_xact_lock(?1, 0)", row -> row.bool(0), AdvisoryLocks.BACKUPS)
                .orElse(false);
    }

    /** Gives a blob written before puts were recorded the time of its file, unless it has a row. */
    static void insertPut(EntityManager em, String digest, OffsetDateTime modified) {
        NativeSql.update(em, "insert into blob_puts (digest, last_put) values (?1, ?2) on conflict do nothing", digest,
                modified);
    }

    /** The blob's last write, its row locked; empty when another transaction holds the row. */
    static Optional<OffsetDateTime> lockLastPut(EntityManager em, String digest) {
        return NativeSql.first(em, "select last_put from blob_puts where digest = ?1 for update skip locked",
                row -> row.time(0), digest);
    }

    /** The question whether a blob ({@code ?1}) is used, from the references' conditions; null when there are none. */
    static String usesQuery(List<String> conditions) {
        if (conditions.isEmpty()) {
            return null;
        }
        return "select "
                + conditions.stream().map(condition -> "(" + condition + ")").collect(Collectors.joining(" or "));
    }

    /** Whether the blob is used, by {@link #usesQuery}'s question. */
    static boolean used(EntityManager em, String usesQuery, String digest) {
        return NativeSql.first(em, usesQuery, row -> row.bool(0), digest).orElse(false);
    }

    /** Forgets a removed blob: its row of puts and its MD5. */
    static void forget(EntityManager em, String digest) {
        NativeSql.update(em, "delete from blob_puts where digest = ?1", digest);
        NativeSql.update(em, "delete from blob_md5s where digest = ?1", digest);
    }
}

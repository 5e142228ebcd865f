package dev.fulcrum.backups;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The SQL of backups and restores ({@link Backups}, {@link Restore}, which open the connections and hold the
 * transactions): the backups' advisory locks, PostgreSQL's catalog (the schema's tables, columns, foreign keys and
 * sequences), {@code COPY} of a table out and in, the sequences read and set, and {@code restored_backups}. Tables,
 * columns and sequences are named from the catalog, {@link #quoted}.
 */
final class BackupStatements {

    private BackupStatements() {
    }

    static String quoted(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    /** Takes the backups' lock, shared (backups run side by side; a restore excludes them), until released. */
    static void lockShared(Connection connection) throws SQLException {
        NativeSql.first(connection, "select pg_advisory_lock_shared(?1, 0) is null", row -> row.bool(0),
                AdvisoryLocks.BACKUPS);
    }

    static void unlockShared(Connection connection) throws SQLException {
        NativeSql.first(connection, "select pg_advisory_unlock_shared(?1, 0)", row -> row.bool(0),
                AdvisoryLocks.BACKUPS);
    }

    /** Takes the lock {@code key} of the backups' locks, exclusive, until released. */
    static void lock(Connection connection, int key) throws SQLException {
        NativeSql.first(connection, "select pg_advisory_lock(?1, ?2) is null", row -> row.bool(0),
                AdvisoryLocks.BACKUPS, key);
    }

    static void unlock(Connection connection, int key) throws SQLException {
        NativeSql.first(connection, "select pg_advisory_unlock(?1, ?2)", row -> row.bool(0), AdvisoryLocks.BACKUPS,
                key);
    }

    /** Makes the connection's transaction one read-only snapshot. */
    static void snapshot(Connection connection) throws SQLException {
        NativeSql.update(connection, "set transaction isolation level repeatable read, read only");
    }

    /** The version of the newest migration applied, if any. */
    static Optional<String> schemaVersion(Connection connection) throws SQLException {
        return NativeSql.first(connection, """
                select version from flyway_schema_history where success and version is not null
                order by installed_rank desc limit 1""", row -> row.string(0));
    }

    /** The table's stored columns (not the generated ones), in their order. */
    static List<String> columns(Connection connection, String table) throws SQLException {
        return NativeSql.list(connection, """
                select attname from pg_attribute
                where attrelid = cast(?1 as regclass) and attnum > 0 and not attisdropped and attgenerated = ''
                order by attnum""", row -> row.string(0), quoted(table));
    }

    /** Copies the table's columns to {@code out} in PostgreSQL's binary format; how many rows. */
    static long copyOut(Connection connection, String table, List<String> columns, OutputStream out)
            throws SQLException, IOException {
        return NativeSql.copyOut(connection, copy(table, columns, "to stdout"), out);
    }

    /** Loads the table's columns from {@code in}, in PostgreSQL's binary format; how many rows. */
    static long copyIn(Connection connection, String table, List<String> columns, InputStream in)
            throws SQLException, IOException {
        return NativeSql.copyIn(connection, copy(table, columns, "from stdin"), in);
    }

    /**
     * PostgreSQL's binary {@code COPY} of the table's columns, {@code direction} {@code to stdout} or
     * {@code from stdin}.
     */
    private static String copy(String table, List<String> columns, String direction) {
        return "copy " + quoted(table) + " ("
                + String.join(", ", columns.stream().map(BackupStatements::quoted).toList()) + ") " + direction
                + " (format binary)";
    }

    /** The names of the schema's sequences, in order. */
    static List<String> sequenceNames(Connection connection) throws SQLException {
        return NativeSql.list(connection, """
                select relname from pg_class
                where relkind = 'S' and relnamespace = cast(current_schema() as regnamespace) order by relname""",
                row -> row.string(0));
    }

    /** Where the sequence stands. */
    static BackupManifest.Sequence sequence(Connection connection, String sequence) throws SQLException {
        return NativeSql.first(connection, "select last_value, is_called from " + quoted(sequence),
                row -> new BackupManifest.Sequence(sequence, row.longValue(0), row.bool(1))).orElseThrow();
    }

    /** Sets the sequence where it stood. */
    static void setSequence(Connection connection, BackupManifest.Sequence sequence) throws SQLException {
        NativeSql.first(connection, "select setval(cast(?1 as regclass), ?2, ?3)", row -> row.longValue(0),
                quoted(sequence.name()), sequence.lastValue(), sequence.isCalled());
    }

    /** The names of the schema's tables but Flyway's history, in order. */
    static List<String> tableNames(Connection connection) throws SQLException {
        return NativeSql.list(connection, """
                select relname from pg_class
                where relkind = 'r' and relnamespace = cast(current_schema() as regnamespace)
                  and relname <> 'flyway_schema_history'
                order by relname""", row -> row.string(0));
    }

    /** The schema's foreign keys, each as the table that has it and the table it names. */
    static List<List<String>> foreignKeys(Connection connection) throws SQLException {
        return NativeSql.list(connection, """
                select child.relname, parent.relname from pg_constraint c
                join pg_class child on child.oid = c.conrelid join pg_class parent on parent.oid = c.confrelid
                where c.contype = 'f' and c.connamespace = cast(current_schema() as regnamespace)""",
                row -> List.of(row.string(0), row.string(1)));
    }

    /** Empties the tables. */
    static void truncate(Connection connection, List<String> tables) throws SQLException {
        NativeSql.update(connection,
                "truncate " + String.join(", ", tables.stream().map(BackupStatements::quoted).toList()));
    }

    /** The tables, views and sequences of the schema, by name. */
    static List<String> relations(Connection connection) throws SQLException {
        return NativeSql.list(connection, """
                select relname from pg_class
                where relkind in ('r', 'v', 'S') and relnamespace = cast(current_schema() as regnamespace)
                order by relname""", row -> row.string(0));
    }

    /** Whether the table has no rows. */
    static boolean empty(Connection connection, String table) throws SQLException {
        return NativeSql.first(connection, "select not exists (select 1 from " + table + ")", row -> row.bool(0))
                .orElse(false);
    }

    /** Whether the backup was restored into this database (false before {@code restored_backups} exists). */
    static boolean restored(Connection connection, UUID backupId) throws SQLException {
        return NativeSql.first(connection, """
                select to_regclass('restored_backups') is not null""", row -> row.bool(0)).orElse(false) && NativeSql
                .first(connection, "select 1 from restored_backups where id = ?1", row -> true, backupId).isPresent();
    }

    /** Records a backup restored (one row). */
    static int recordRestored(Connection connection, UUID backupId, OffsetDateTime madeAt, String schemaVersion)
            throws SQLException {
        return NativeSql.update(connection, """
                insert into restored_backups (id, made_at, schema_version) values (?1, ?2, ?3)""", backupId, madeAt,
                schemaVersion);
    }
}

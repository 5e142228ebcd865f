package dev.fulcrum.datasets;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The dataset SQL the ORM cannot match: the measured hot read (API key, caller's role, project and version in one
 * statement, where entity queries would take four), and the bulk insert of a table's rows from arrays with
 * {@code unnest}, each row stored once ({@code on conflict do nothing}).
 */
@ApplicationScoped
class DatasetStatements {

    private static final String READ_SQL = """
            select e.entity_id, m.role, p.project_id, v.id as version_id, v.digest, v.version_index,
                   v.created_at, v.name, v.description, v.table_digest
            from entity_names e
            left join memberships m on m.entity_id = e.entity_id and m.user_id = ?1
            left join project_names p on p.entity_id = e.entity_id and p.name = ?3
            left join lateral (
                select * from dataset_versions d
                where d.project_id = p.project_id and d.object_id = ?4 and d.dataset and d.deleted_at is null /*version*/
                order by d.version_index desc limit 1) v on true
            where e.name = ?2""";
    // one statement text per kind of selector, without "? is null or" branches, so that PostgreSQL keeps one generic
    // plan per text instead of planning every execution
    private static final String READ_LATEST = READ_SQL.replace("/*version*/", "");
    private static final String READ_BY_INDEX = READ_SQL.replace("/*version*/", "and d.version_index = ?5");
    private static final String READ_BY_DIGEST = READ_SQL.replace("/*version*/", "and d.digest = ?5");

    @Inject
    EntityManager em;

    /**
     * What one read found: the entity, and as far as they exist the caller's stored role in it, the project and the
     * version (null where not found).
     */
    record Read(long entityId, String role, Long projectId, DatasetVersion version) {
    }

    /*
     * The statement of a first read runs as plain JDBC on one pooled connection, outside any transaction: through the
     * ORM's native queries (a session, a connection per statement) the read measured 41-52 % of /v1/health's throughput
     * and p99 108-411 ms, against 97 % and 11 ms this way (bench/datasets.sh on the same machine).
     */

    /** The user's role on the entity and the selected version in one statement; empty when the entity is unknown. */
    Optional<Read> read(Connection connection, long userId, String entity, String project, String objectId,
            VersionSelector selector) throws SQLException {
        if (selector.latest()) {
            return NativeSql.first(connection, READ_LATEST, row -> read(row, objectId), userId, entity, project,
                    objectId);
        }
        return NativeSql.first(connection, selector.index() != null ? READ_BY_INDEX : READ_BY_DIGEST,
                row -> read(row, objectId), userId, entity, project, objectId,
                selector.index() != null ? selector.index() : selector.digest());
    }

    private static Read read(NativeSql.Row row, String objectId) {
        DatasetVersion version = null;
        if (row.value(3) != null) {
            version = new DatasetVersion();
            version.id = row.longValue(3);
            version.projectId = row.longValue(2);
            version.objectId = objectId;
            version.digest = row.string(4);
            version.versionIndex = row.intValue(5);
            version.createdAt = row.time(6);
            version.name = row.string(7);
            version.description = row.string(8);
            version.tableDigest = row.string(9);
        }
        return new Read(row.longValue(0), row.string(1), row.longValue(2), version);
    }

    /**
     * Stores a table whose rows are {@code rowDigests}, each one either stored already (a row of another table) or one
     * of {@code newRows}. Runs in the caller's transaction.
     */
    void storeTable(String tableDigest, List<String> rowDigests, List<DatasetService.Row> newRows) {
        if (NativeSql.update(em,
                "insert into dataset_tables (digest, row_count) values (?1, ?2) on conflict do nothing", tableDigest,
                rowDigests.size()) == 0) {
            return;
        }
        if (!newRows.isEmpty()) {
            NativeSql.update(em, """
                    insert into dataset_rows (digest, val)
                    select * from unnest(cast(?1 as varchar[]), cast(?2 as text[])) order by 1
                    on conflict do nothing""",
                    NativeSql.textArray(newRows.stream().map(DatasetService.Row::digest).toList()),
                    NativeSql.textArray(newRows.stream().map(DatasetService.Row::json).toList()));
        }
        NativeSql.update(em, """
                insert into dataset_table_rows (table_digest, original_index, row_digest)
                select ?1, cast(ordinality - 1 as int), d
                from unnest(cast(?2 as varchar[])) with ordinality as t(d, ordinality)""", tableDigest,
                NativeSql.textArray(rowDigests));
    }

    /**
     * Stores the table and its rows, each once; concurrent writers of the same content wait for each other. Runs in the
     * caller's transaction.
     */
    void storeTable(String tableDigest, List<DatasetService.Row> rows) {
        if (NativeSql.update(em,
                "insert into dataset_tables (digest, row_count) values (?1, ?2) on conflict do nothing", tableDigest,
                rows.size()) == 0) {
            return; // this table, and so its rows, is stored already
        }
        List<String> digests = new ArrayList<>(rows.size());
        List<String> values = new ArrayList<>(rows.size());
        for (DatasetService.Row row : rows) {
            digests.add(row.digest());
            values.add(row.json());
        }
        NativeSql.TextArray digestArray = NativeSql.textArray(digests);
        // in digest order, so that concurrent writers of overlapping rows lock them in the same order
        NativeSql.update(em, """
                insert into dataset_rows (digest, val)
                select * from unnest(cast(?1 as varchar[]), cast(?2 as text[])) order by 1
                on conflict do nothing""", digestArray, NativeSql.textArray(values));
        NativeSql.update(em, """
                insert into dataset_table_rows (table_digest, original_index, row_digest)
                select ?1, cast(ordinality - 1 as int), d
                from unnest(cast(?2 as varchar[])) with ordinality as t(d, ordinality)""", tableDigest, digestArray);
    }

}

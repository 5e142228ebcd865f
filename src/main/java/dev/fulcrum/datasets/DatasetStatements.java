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

    /** A table query of {@link DatasetService#forEachRow}: its text up to the page, and its parameters. */
    record RowQuery(String sql, List<Object> params) {
    }

    /**
     * The query of the table's rows narrowed to {@code rowDigests} (null: all) and ordered by {@code orders}, the
     * original index breaking ties; {@link #rows} reads a page of it.
     */
    static RowQuery rowQuery(String tableDigest, List<String> rowDigests, List<DatasetService.RowOrder> orders) {
        List<Object> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder("select r.digest, r.val, t.original_index from dataset_table_rows t"
                + " join dataset_rows r on r.digest = t.row_digest where t.table_digest = ")
                        .append(NativeSql.param(params, tableDigest));
        if (rowDigests != null) {
            sql.append(" and t.row_digest = any(").append(NativeSql.param(params, rowDigests.toArray(String[]::new)))
                    .append(")");
        }
        sql.append(" order by ");
        for (DatasetService.RowOrder order : orders) {
            sql.append("r.val::jsonb #> ").append(NativeSql.param(params, order.path())).append(" ")
                    .append(order.descending() ? "desc" : "asc").append(", ");
        }
        int from = params.size() + 1;
        sql.append("t.original_index offset ?").append(from).append(" limit ?").append(from + 1);
        return new RowQuery(sql.toString(), List.copyOf(params));
    }

    /** A page of the query's rows: at most {@code page} from {@code offset}. */
    List<DatasetService.TableRow> rows(RowQuery query, long offset, int page) {
        List<Object> bound = new ArrayList<>(query.params());
        bound.add(offset);
        bound.add(page);
        return NativeSql.list(em, query.sql(),
                r -> new DatasetService.TableRow(r.string(0), r.string(1), r.intValue(2)), bound.toArray());
    }

    /** The value of the table's row of digest {@code rowDigest}, if the table has it. */
    Optional<String> rowValue(String tableDigest, String rowDigest) {
        return NativeSql.first(em, """
                select r.val from dataset_table_rows t join dataset_rows r on r.digest = t.row_digest
                where t.table_digest = ?1 and t.row_digest = ?2 limit 1""", r -> r.string(0), tableDigest, rowDigest);
    }

    /**
     * The row count of each of the tables {@code digests} the project may read (a table of the project or of one of its
     * dataset versions), with the bytes of their rows when {@code storage}; in no particular order.
     */
    List<WeaveRefs.TableStats> tableStats(long projectId, List<String> digests, boolean storage) {
        String size = storage
                ? """
                        (select sum(octet_length(r.val)) from dataset_table_rows tr join dataset_rows r on r.digest = tr.row_digest
                         where tr.table_digest = t.digest)"""
                : "null";
        return NativeSql.list(em, "select t.digest, t.row_count, " + size + " " + """
                from dataset_tables t where t.digest = any(cast(?1 as text[])) and (
                    exists (select 1 from project_tables p where p.project_id = ?2 and p.table_digest = t.digest)
                    or exists (select 1 from dataset_versions v where v.project_id = ?2 and v.table_digest = t.digest
                               and v.deleted_at is null))""",
                r -> new WeaveRefs.TableStats(r.string(0), r.intValue(1), r.longValue(2)),
                digests.toArray(String[]::new), projectId);
    }

    /** Makes the table one of the project's (Weave's tables), once. */
    void addProjectTable(long projectId, String tableDigest) {
        NativeSql.update(em,
                "insert into project_tables (project_id, table_digest) values (?1, ?2) on conflict do nothing",
                projectId, tableDigest);
    }

    /** Which of {@code rowDigests} are rows of a table the project may read (its own, or a dataset version's). */
    List<String> readableRows(long projectId, List<String> rowDigests) {
        return NativeSql.list(em, """
                select distinct tr.row_digest
                from (select p.table_digest from project_tables p where p.project_id = ?2
                      union select v.table_digest from dataset_versions v
                      where v.project_id = ?2 and v.deleted_at is null) t
                join dataset_table_rows tr on tr.table_digest = t.table_digest
                join unnest(cast(?1 as text[])) q(digest) on q.digest = tr.row_digest""", row -> row.string(0),
                NativeSql.textArray(new java.util.LinkedHashSet<>(rowDigests)), projectId);
    }

    /** The digests of the table's rows, in their original order. */
    List<String> rowDigests(String tableDigest) {
        return NativeSql.list(em,
                "select row_digest from dataset_table_rows where table_digest = ?1 order by original_index",
                row -> row.string(0), tableDigest);
    }

    /** Stores a Weave file of the project, once per digest. */
    void storeFile(long projectId, String digest, String name, byte[] content) {
        NativeSql.update(em, """
                insert into weave_files (project_id, digest, name, content) values (?1, ?2, ?3, ?4)
                on conflict do nothing""", projectId, digest, name, content);
    }

    /** The content of the project's Weave file of this digest, if it has one. */
    Optional<byte[]> fileContent(long projectId, String digest) {
        return NativeSql.first(em, "select content from weave_files where project_id = ?1 and digest = ?2",
                row -> (byte[]) row.value(0), projectId, digest);
    }
}

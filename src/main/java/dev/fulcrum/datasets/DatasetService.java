package dev.fulcrum.datasets;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.agroal.api.AgroalDataSource;
import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.AuthenticatesInQuery;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.CurrentCaller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.AdvisoryLocks;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.CanonicalJson;
import dev.fulcrum.platform.QueryParams;

/**
 * Versioned datasets. Rows are stored once per row digest, tables once per table digest; a version names a table.
 * Version indexes are handed out under a per-object advisory lock, so concurrent creates get distinct, gap-free
 * indexes.
 */
@ApplicationScoped
public class DatasetService {

    public static final int DEFAULT_LIST_LIMIT = 100;
    public static final int MAX_LIST_LIMIT = 10_000;
    private static final int ROW_PAGE = 1_000;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9 _./-]{1,128}");
    private static final Pattern OBJECT_ID = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
    private static final Pattern TABLE_DIGEST = Pattern.compile("[0-9a-f]{64}");

    private static final String READ_SQL = """
            select k.id, u.id, u.username, u.admin,
                   e.id, m.role, p.id, v.id, v.digest, v.version_index, v.created_at, v.name,
                   v.description, v.table_digest, (select value from access_epoch where id = 1)
            from api_keys k
            join users u on u.id = k.user_id
            left join entities e on e.name = ?
            left join entity_members m on m.entity_id = e.id and m.user_id = u.id
            left join projects p on p.entity_id = e.id and p.name = ?
            left join lateral (
                select * from dataset_versions d
                where d.project_id = p.id and d.object_id = ? and d.deleted_at is null /*version*/
                order by d.version_index desc limit 1) v on true
            where k.key_hash = ? and k.revoked_at is null""";
    // one statement text per kind of selector, without "? is null or" branches, so that PostgreSQL keeps one generic
    // plan per text instead of planning every execution
    private static final String READ_LATEST = READ_SQL.replace("/*version*/", "");
    private static final String READ_BY_INDEX = READ_SQL.replace("/*version*/", "and d.version_index = ?");
    private static final String READ_BY_DIGEST = READ_SQL.replace("/*version*/", "and d.digest = ?");
    private static final String CHECK_KEY_SQL = """
            select k.id, u.id, u.username, u.admin, (select value from access_epoch where id = 1)
            from api_keys k join users u on u.id = k.user_id
            where k.key_hash = ? and k.revoked_at is null""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    CurrentCaller current;

    @Inject
    ApiKeys apiKeys;

    @Inject
    DatasetReadCache readCache;

    @Inject
    ObjectMapper json;

    /** A dataset row prepared for storage. */
    record Row(String digest, String json) {
    }

    /** What a create returns; also what it needs to know to answer. */
    public record Created(String digest, String objectId, int versionIndex) {
    }

    public record Version(DatasetVersion version, String entity, String project) {
        public String rowsRef() {
            return "weave:///" + entity + "/" + project + "/table/" + version.tableDigest;
        }
    }

    public record TableRow(String digest, String json, int originalIndex) {
    }

    public Created create(String entity, String project, String name, String description, List<ObjectNode> rows) {
        if (rows == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "rows"));
        }
        String datasetName = name == null ? "Dataset" : name;
        if (!NAME.matcher(datasetName).matches() || datasetName.isBlank()) {
            throw ApiException.invalid(Violation.of("Must be 1 to 128 letters, digits, spaces or '_', '.', '/', '-'",
                    "string_pattern_mismatch", "body", "name"));
        }
        String objectId = objectId(datasetName);
        List<Row> prepared = prepare(rows);
        List<String> rowDigests = new ArrayList<>(prepared.size());
        prepared.forEach(row -> rowDigests.add(row.digest()));
        String tableDigest = Digests.ofTable(rowDigests);
        return store(entity, project, objectId, datasetName, description, prepared, tableDigest);
    }

    /** The dataset's name with spaces and '/' turned into '_', lower-cased. */
    static String objectId(String name) {
        return name.replace(' ', '_').replace('/', '_').toLowerCase(java.util.Locale.ROOT);
    }

    static List<Row> prepare(List<ObjectNode> rows) {
        List<Row> prepared = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            JsonNode row = rows.get(i);
            if (row == null || !row.isObject()) {
                throw ApiException
                        .invalid(Violation.of("Input should be a valid dictionary", "dict_type", "body", "rows", i));
            }
            requireFinite(row, i);
            String json = CanonicalJson.write(row);
            prepared.add(new Row(Digests.ofText(json), json));
        }
        return prepared;
    }

    private static void requireFinite(JsonNode value, int row) {
        if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "rows", row));
        }
        if (value.isContainerNode()) {
            value.forEach(child -> requireFinite(child, row));
        }
    }

    static String objectDigest(String name, String description, String rowsRef) {
        ObjectNode object = JsonNodeFactory.instance.objectNode();
        object.put("_type", "Dataset");
        object.put("_class_name", "Dataset");
        object.putArray("_bases").add("Object").add("BaseModel");
        object.put("name", name);
        object.put("description", description);
        object.put("rows", rowsRef);
        return Digests.ofText(CanonicalJson.write(object));
    }

    @Transactional
    Created store(String entity, String project, String objectId, String name, String description, List<Row> rows,
            String tableDigest) {
        ProjectRef ref = access.writableProject(entity, project);
        String rowsRef = "weave:///" + entity + "/" + project + "/table/" + tableDigest;
        String digest = objectDigest(name, description, rowsRef);
        AdvisoryLocks.lock(em, AdvisoryLocks.DATASET_VERSIONS, ref.projectId() + "/" + objectId);
        em.unwrap(Session.class).doWork(connection -> storeTable(connection, tableDigest, rows));
        DatasetVersion existing = DatasetVersion
                .find("projectId = ?1 and objectId = ?2 and digest = ?3", ref.projectId(), objectId, digest)
                .firstResult();
        if (existing != null) {
            existing.deletedAt = null;
            return new Created(existing.digest, existing.objectId, existing.versionIndex);
        }
        Number last = (Number) em.createNativeQuery(
                "select coalesce(max(version_index), -1) from dataset_versions where project_id = ?1 and object_id = ?2")
                .setParameter(1, ref.projectId()).setParameter(2, objectId).getSingleResult();
        DatasetVersion version = new DatasetVersion();
        version.projectId = ref.projectId();
        version.objectId = objectId;
        version.digest = digest;
        version.versionIndex = last.intValue() + 1;
        version.name = name;
        version.description = description;
        version.tableDigest = tableDigest;
        version.createdBy = access.caller().userId();
        version.createdAt = OffsetDateTime.now();
        version.persist();
        return new Created(digest, objectId, version.versionIndex);
    }

    /** Stores the rows and the table, each once; concurrent writers of the same content wait for each other. */
    private static void storeTable(Connection connection, String tableDigest, List<Row> rows) throws SQLException {
        try (PreparedStatement table = connection.prepareStatement(
                "insert into dataset_tables (digest, row_count) values (?, ?) on conflict do nothing")) {
            table.setString(1, tableDigest);
            table.setInt(2, rows.size());
            if (table.executeUpdate() == 0) {
                return; // this table, and so its rows, is stored already
            }
        }
        String[] digests = new String[rows.size()];
        String[] values = new String[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            digests[i] = rows.get(i).digest();
            values[i] = rows.get(i).json();
        }
        Array digestArray = connection.createArrayOf("varchar", digests);
        Array valueArray = connection.createArrayOf("text", values);
        try (PreparedStatement insertRows = connection.prepareStatement("""
                insert into dataset_rows (digest, val)
                select * from unnest(?::varchar[], ?::text[]) order by 1
                on conflict do nothing""")) {
            insertRows.setArray(1, digestArray);
            insertRows.setArray(2, valueArray);
            insertRows.executeUpdate();
        }
        try (PreparedStatement tableRows = connection.prepareStatement("""
                insert into dataset_table_rows (table_digest, original_index, row_digest)
                select ?, (ordinality - 1)::int, d from unnest(?::varchar[]) with ordinality as t(d, ordinality)""")) {
            tableRows.setString(1, tableDigest);
            tableRows.setArray(2, digestArray);
            tableRows.executeUpdate();
        }
    }

    /**
     * The hot path of the datasets API, answered as serialized JSON. An answer given to the same API key for the same
     * path is reused while the access epoch has not moved (see {@link DatasetReadCache}): that costs one statement, the
     * API key check. Otherwise the API key, the caller's access, the version and the epoch come from one query. Both
     * run on a pooled connection, outside any transaction (the resource method is {@link AuthenticatesInQuery}).
     */
    public byte[] readJson(String entity, String project, String objectId, String digest) {
        requireObjectId(objectId);
        VersionSelector selector = VersionSelector.parse(digest, "path", "digest");
        DatasetReadCache.Key key = new DatasetReadCache.Key(current.keyHash(), entity, project, objectId, digest);
        try (Connection connection = dataSource.getConnection()) {
            DatasetReadCache.Answer known = readCache.get(key);
            if (known != null) {
                if (checkKey(connection) == known.epoch()) {
                    return known.body();
                }
                readCache.remove(key, known);
            }
            return read(connection, key, selector);
        } catch (SQLException e) {
            throw new ApiException(503, "Database unavailable");
        }
    }

    /** Checks the presented API key; the current access epoch. */
    private long checkKey(Connection connection) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(CHECK_KEY_SQL)) {
            query.setString(1, current.keyHash());
            try (ResultSet rs = query.executeQuery()) {
                if (!rs.next()) {
                    throw ApiKeys.invalidKey();
                }
                authenticated(connection, rs);
                return rs.getLong(5);
            }
        }
    }

    private void authenticated(Connection connection, ResultSet rs) throws SQLException {
        Caller caller = new Caller(rs.getLong(2), rs.getString(3), rs.getBoolean(4), rs.getLong(1));
        current.authenticated(caller);
        apiKeys.recordUse(connection, caller.apiKeyId());
    }

    private byte[] read(Connection connection, DatasetReadCache.Key key, VersionSelector selector) throws SQLException {
        String sql = selector.latest() ? READ_LATEST : selector.index() != null ? READ_BY_INDEX : READ_BY_DIGEST;
        try (PreparedStatement query = connection.prepareStatement(sql)) {
            query.setString(1, key.entity());
            query.setString(2, key.project());
            query.setString(3, key.objectId());
            int next = 4;
            if (selector.index() != null) {
                query.setInt(next++, selector.index());
            } else if (selector.digest() != null) {
                query.setString(next++, selector.digest());
            }
            query.setString(next, key.keyHash());
            try (ResultSet rs = query.executeQuery()) {
                if (!rs.next()) {
                    throw ApiKeys.invalidKey();
                }
                authenticated(connection, rs);
                if (rs.getObject(5) == null) {
                    throw ApiException.notFound("Entity " + key.entity() + " not found");
                }
                Long projectId = rs.getObject(7, Long.class);
                access.authorize(key.entity(), key.project(), rs.getLong(5), projectId, rs.getString(6), Role.VIEWER);
                if (projectId == null) {
                    throw ApiException.notFound("Project " + key.entity() + "/" + key.project() + " not found");
                }
                if (rs.getObject(8) == null) {
                    throw ApiException.notFound("Dataset " + key.entity() + "/" + key.project() + "/" + key.objectId()
                            + ":" + selector + " not found");
                }
                DatasetVersion version = new DatasetVersion();
                version.id = rs.getLong(8);
                version.projectId = projectId;
                version.objectId = key.objectId();
                version.digest = rs.getString(9);
                version.versionIndex = rs.getInt(10);
                version.createdAt = rs.getObject(11, OffsetDateTime.class);
                version.name = rs.getString(12);
                version.description = rs.getString(13);
                version.tableDigest = rs.getString(14);
                byte[] body = json
                        .writeValueAsBytes(DatasetMapper.toReadRes(new Version(version, key.entity(), key.project())));
                readCache.put(key, rs.getLong(15), body);
                return body;
            }
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A dataset version could not be written as JSON", e);
        }
    }

    private DatasetVersion find(long projectId, String objectId, VersionSelector selector, String entity,
            String project) {
        DatasetVersion version;
        if (selector.latest()) {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and deletedAt is null order by versionIndex desc",
                            projectId, objectId)
                    .firstResult();
        } else if (selector.index() != null) {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and versionIndex = ?3 and deletedAt is null", projectId,
                            objectId, selector.index())
                    .firstResult();
        } else {
            version = DatasetVersion.find("projectId = ?1 and objectId = ?2 and digest = ?3 and deletedAt is null",
                    projectId, objectId, selector.digest()).firstResult();
        }
        if (version == null) {
            throw ApiException
                    .notFound("Dataset " + entity + "/" + project + "/" + objectId + ":" + selector + " not found");
        }
        return version;
    }

    /** The latest version of each dataset of the project, by object id. */
    @Transactional
    public List<Version> list(String entity, String project, Integer limit, Integer offset) {
        int max = QueryParams.limit(limit, DEFAULT_LIST_LIMIT, 0, MAX_LIST_LIMIT);
        int skip = QueryParams.offset(offset);
        ProjectRef ref = access.readableProject(entity, project);
        @SuppressWarnings("unchecked")
        List<DatasetVersion> versions = em.createNativeQuery("""
                select distinct on (object_id) * from dataset_versions
                where project_id = ?1 and deleted_at is null
                order by object_id, version_index desc
                limit ?2 offset ?3""", DatasetVersion.class).setParameter(1, ref.projectId()).setParameter(2, max)
                .setParameter(3, skip).getResultList();
        return versions.stream().map(v -> new Version(v, entity, project)).toList();
    }

    /** Soft-deletes the named versions, or all; an unknown one is a 404 and nothing is deleted. */
    @Transactional
    public int delete(String entity, String project, String objectId, List<String> digests) {
        requireObjectId(objectId);
        List<VersionSelector> selectors = new ArrayList<>();
        for (String value : digests == null ? List.<String> of() : digests) {
            for (String part : value.split(",")) {
                if (!part.isBlank()) {
                    selectors.add(VersionSelector.parse(part.trim(), "query", "digests"));
                }
            }
        }
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        Map<Long, DatasetVersion> doomed = new LinkedHashMap<>();
        if (selectors.isEmpty()) {
            List<DatasetVersion> all = DatasetVersion.list("projectId = ?1 and objectId = ?2 and deletedAt is null",
                    ref.projectId(), objectId);
            if (all.isEmpty()) {
                throw ApiException.notFound("Dataset " + entity + "/" + project + "/" + objectId + " not found");
            }
            all.forEach(v -> doomed.put(v.id, v));
        } else {
            for (VersionSelector selector : selectors) {
                DatasetVersion v = find(ref.projectId(), objectId, selector, entity, project);
                doomed.put(v.id, v);
            }
        }
        OffsetDateTime now = OffsetDateTime.now();
        doomed.values().forEach(v -> v.deletedAt = now);
        return doomed.size();
    }

    /** Checks access and that the table belongs to a dataset of the project. */
    @Transactional
    public void requireTable(String entity, String project, String tableDigest, Object... loc) {
        if (tableDigest == null || !TABLE_DIGEST.matcher(tableDigest).matches()) {
            throw ApiException.invalid(
                    Violation.of("Must be a 64-character lowercase hex table digest", "string_pattern_mismatch", loc));
        }
        ProjectRef ref = access.readableProject(entity, project);
        long count = DatasetVersion.count("projectId = ?1 and tableDigest = ?2 and deletedAt is null", ref.projectId(),
                tableDigest);
        if (count == 0) {
            throw ApiException.notFound("Table " + tableDigest + " not found in " + entity + "/" + project);
        }
    }

    /**
     * Feeds the table's rows from {@code offset}, at most {@code limit} (null: all), to {@code sink}, reading a page
     * per short transaction so that any table streams in constant memory.
     */
    public void forEachRow(String tableDigest, int offset, Integer limit, Consumer<TableRow> sink) {
        long remaining = limit == null ? Long.MAX_VALUE : limit;
        int next = offset;
        while (remaining > 0) {
            int page = (int) Math.min(ROW_PAGE, remaining);
            int from = next;
            List<TableRow> rows = QuarkusTransaction.requiringNew().call(() -> rowPage(tableDigest, from, page));
            rows.forEach(sink);
            if (rows.size() < page) {
                return;
            }
            remaining -= rows.size();
            next += rows.size();
        }
    }

    private List<TableRow> rowPage(String tableDigest, int from, int page) {
        List<TableRow> rows = new ArrayList<>(page);
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement query = connection.prepareStatement("""
                    select r.digest, r.val, t.original_index
                    from dataset_table_rows t join dataset_rows r on r.digest = t.row_digest
                    where t.table_digest = ? and t.original_index >= ?
                    order by t.original_index limit ?""")) {
                query.setString(1, tableDigest);
                query.setInt(2, from);
                query.setInt(3, page);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new TableRow(rs.getString(1), rs.getString(2), rs.getInt(3)));
                    }
                }
            }
        });
        return rows;
    }

    static void requireObjectId(String objectId) {
        if (objectId == null || !OBJECT_ID.matcher(objectId).matches()) {
            throw ApiException.invalid(Violation.of("Must be 1 to 128 letters, digits, '_', '.' or '-'",
                    "string_pattern_mismatch", "path", "object_id"));
        }
    }

}

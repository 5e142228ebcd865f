package dev.fulcrum.datasets;

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

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.CanonicalJson;

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
    static final Pattern OBJECT_ID = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
    /** A table's digest as Weave writes it. */
    static final Pattern TABLE_DIGEST = Pattern.compile("[0-9a-f]{64}");

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    DatasetStatements statements;

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
        String datasetName = name == null ? "Dataset" : name;
        if (!NAME.matcher(datasetName).matches() || datasetName.isBlank()) {
            throw ApiException.invalid(Violation.of("Must be 1 to 128 letters, digits, spaces or '_', '.', '/', '-'",
                    "string_pattern_mismatch", "body", "name"));
        }
        String objectId = objectId(datasetName);
        if (!usableObjectId(objectId)) {
            throw ApiException.invalid(Violation.of(
                    "Must not be '.' or '..': the name becomes the dataset's object id, a segment of its path",
                    "value_error", "body", "name"));
        }
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
        return prepare(rows, "body", "rows");
    }

    /**
     * The rows as JSON text in their keys' order, with their digests (of the canonical, key-sorted text, as Weave's);
     * {@code loc} is where the rows are in the request.
     */
    static List<Row> prepare(List<ObjectNode> rows, Object... loc) {
        List<Row> prepared = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            JsonNode row = rows.get(i);
            if (row == null || !row.isObject()) {
                throw ApiException.invalid(Violation.of("Input should be a valid dictionary", "dict_type", at(loc, i)));
            }
            requireFinite(row, at(loc, i));
            prepared.add(new Row(Digests.ofText(CanonicalJson.write(row)), CanonicalJson.writeInOrder(row)));
        }
        return prepared;
    }

    /** {@code loc} with {@code last} added: where a value stands in a request. */
    public static Object[] at(Object[] loc, Object last) {
        Object[] full = java.util.Arrays.copyOf(loc, loc.length + 1);
        full[loc.length] = last;
        return full;
    }

    /** Refuses infinite and NaN numbers anywhere in {@code value}, naming {@code loc}. */
    public static void requireFinite(JsonNode value, Object[] loc) {
        if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", loc));
        }
        if (value.isContainerNode()) {
            value.forEach(child -> requireFinite(child, loc));
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
        statements.storeTable(tableDigest, rows);
        DatasetVersion version = versionOf(ref, objectId, digest);
        if (version.isPersistent()) {
            return new Created(version.digest, version.objectId, version.versionIndex);
        }
        version.name = name;
        version.description = description;
        version.tableDigest = tableDigest;
        version.persist();
        return new Created(digest, objectId, version.versionIndex);
    }

    /**
     * The version of the object with that content: the stored one (undeleted again; {@code isPersistent()}), or a new
     * one with the next index, its author and time, for the caller to complete and persist. Called with the object's
     * lock ({@link AdvisoryLocks#DATASET_VERSIONS}) held, by both doors: v2 and Weave's {@code /obj/create}.
     */
    DatasetVersion versionOf(ProjectRef ref, String objectId, String digest) {
        DatasetVersion existing = DatasetVersion
                .find("projectId = ?1 and objectId = ?2 and digest = ?3", ref.projectId(), objectId, digest)
                .firstResult();
        if (existing != null) {
            existing.deletedAt = null;
            return existing;
        }
        Integer last = em
                .createQuery("select max(versionIndex) from DatasetVersion where projectId = ?1 and objectId = ?2",
                        Integer.class)
                .setParameter(1, ref.projectId()).setParameter(2, objectId).getSingleResult();
        DatasetVersion version = new DatasetVersion();
        version.projectId = ref.projectId();
        version.objectId = objectId;
        version.digest = digest;
        version.versionIndex = last == null ? 0 : last + 1;
        version.createdBy = access.caller().userId();
        version.createdAt = OffsetDateTime.now();
        return version;
    }

    private DatasetVersion find(long projectId, String objectId, VersionSelector selector, String entity,
            String project) {
        DatasetVersion version;
        if (selector.latest()) {
            version = DatasetVersion.find(
                    "projectId = ?1 and objectId = ?2 and dataset and deletedAt is null order by versionIndex desc",
                    projectId, objectId).firstResult();
        } else if (selector.index() != null) {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and versionIndex = ?3 and dataset and deletedAt is null",
                            projectId, objectId, selector.index())
                    .firstResult();
        } else {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and digest = ?3 and dataset and deletedAt is null",
                            projectId, objectId, selector.digest())
                    .firstResult();
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
        if (max == 0) {
            return List.of();
        }
        List<DatasetVersion> versions = DatasetVersion
                .find("""
                        from DatasetVersion v where v.projectId = ?1 and v.dataset and v.deletedAt is null
                        and v.versionIndex = (select max(w.versionIndex) from DatasetVersion w
                            where w.projectId = v.projectId and w.objectId = v.objectId and w.dataset and w.deletedAt is null)""",
                        Sort.by("objectId"), ref.projectId())
                .range(skip, skip + max - 1).list();
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
            List<DatasetVersion> all = DatasetVersion.list(
                    "projectId = ?1 and objectId = ?2 and dataset and deletedAt is null", ref.projectId(), objectId);
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
        if (!hasTable(ref.projectId(), tableDigest)) {
            throw ApiException.notFound("Table " + tableDigest + " not found in " + entity + "/" + project);
        }
    }

    /** Whether a dataset of the project names the table, or the project published it with {@code /table/create}. */
    boolean hasTable(long projectId, String tableDigest) {
        return DatasetVersion.count("projectId = ?1 and tableDigest = ?2 and deletedAt is null", projectId,
                tableDigest) > 0
                || ProjectTable.count("projectId = ?1 and tableDigest = ?2", projectId, tableDigest) > 0;
    }

    /** The number of rows of a table the project may read (see {@link #requireTable}). */
    @Transactional
    public int rowCount(String entity, String project, String tableDigest, Object... loc) {
        requireTable(entity, project, tableDigest, loc);
        return DatasetTable.<DatasetTable> findById(tableDigest).rowCount;
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

    /** An order of a table query: a key path into the rows, descending or not. */
    public record RowOrder(String[] path, boolean descending) {
    }

    /**
     * Feeds the table's rows narrowed to {@code rowDigests} (null: all) and ordered by {@code orders} (empty: the
     * original order), from {@code offset}, at most {@code limit} (null: all), a page per short transaction. Values
     * compare as jsonb (numbers by value, strings by text); a row without the key sorts as greater than every value;
     * the original index breaks ties, so that pages never overlap.
     */
    public void forEachRow(String tableDigest, List<String> rowDigests, List<RowOrder> orders, int offset,
            Integer limit, Consumer<TableRow> sink) {
        if (rowDigests == null && orders.isEmpty()) {
            forEachRow(tableDigest, offset, limit, sink);
            return;
        }
        DatasetStatements.RowQuery query = DatasetStatements.rowQuery(tableDigest, rowDigests, orders);
        long remaining = limit == null ? Long.MAX_VALUE : limit;
        long next = offset;
        while (remaining > 0) {
            int page = (int) Math.min(ROW_PAGE, remaining);
            long from = next;
            List<TableRow> rows = QuarkusTransaction.requiringNew().call(() -> statements.rows(query, from, page));
            rows.forEach(sink);
            if (rows.size() < page) {
                return;
            }
            remaining -= rows.size();
            next += rows.size();
        }
    }

    private List<TableRow> rowPage(String tableDigest, int from, int page) {
        return em.createQuery("""
                select r.digest, r.val, t.originalIndex from DatasetTableRow t join t.row r
                where t.tableDigest = ?1 and t.originalIndex >= ?2 order by t.originalIndex""", TableRow.class)
                .setParameter(1, tableDigest).setParameter(2, from).setMaxResults(page).getResultList();
    }

    static void requireObjectId(String objectId) {
        if (!usableObjectId(objectId)) {
            throw ApiException.invalid(Violation.of(OBJECT_ID_RULE, "string_pattern_mismatch", "path", "object_id"));
        }
    }

    static final String OBJECT_ID_RULE = "Must be 1 to 128 letters, digits, '_', '.' or '-', and not '.' or '..'";

    /**
     * Whether an object id can name a dataset: of its characters, and not {@code .} or {@code ..}, which a URL path
     * (and every client that builds one) reads as "here" and "up" and so can never reach.
     */
    static boolean usableObjectId(String objectId) {
        return objectId != null && OBJECT_ID.matcher(objectId).matches() && !objectId.equals(".")
                && !objectId.equals("..");
    }

}

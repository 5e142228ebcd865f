package dev.fulcrum.datasets;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TypedQuery;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.CanonicalJson;

/**
 * Weave's object and table API over the dataset store. Tables are the datasets' tables; objects are rows of
 * {@code dataset_versions}: a {@code Dataset} object is the dataset version the v2 API reads, other kinds share the
 * object ids and version indexes but are not datasets. Digests are computed here from the canonical JSON of what was
 * sent.
 */
@ApplicationScoped
public class WeaveObjects {

    private static final Pattern TABLE_REF = Pattern.compile("weave:///([^/]+)/([^/]+)/table/([^/]*)(/.*)?",
            Pattern.DOTALL);

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    DatasetStatements statements;

    @Inject
    DatasetService datasets;

    /** A project named by a request's {@code project_id}. */
    public record ProjectName(String entity, String project) {
        /** {@code entity/project}, as requests name it. */
        public String id() {
            return entity + "/" + project;
        }
    }

    public record TableCreated(String digest, List<String> rowDigests) {
    }

    /** A stored version and whether it is the latest of its object id. */
    public record Found(DatasetVersion version, ProjectName project, boolean latest) {
    }

    /** What the contract says of a {@code project_id} that is not {@code entity/project} (its x-pattern-message). */
    static final String PROJECT_ID_RULE = "Must be 'entity/project': an entity of 1 to 64 and a project of 1 to 128"
            + " letters, digits, '_', '.' or '-', each starting with a letter or digit";

    /**
     * {@code entity/project}, or a 422 at {@code loc}: the contract's pattern, checked here too for the multipart
     * {@code project_id} of {@code /file/create}, which the generated interface does not validate.
     */
    public static ProjectName projectName(String projectId, Object... loc) {
        String[] parts = projectId == null ? new String[0] : projectId.split("/", -1);
        if (parts.length != 2 || !Names.isEntity(parts[0]) || !Names.isProject(parts[1])) {
            throw ApiException.invalid(Violation.of(PROJECT_ID_RULE, "string_pattern_mismatch", loc));
        }
        return new ProjectName(parts[0], parts[1]);
    }

    static String requireObjectId(String objectId, Object... loc) {
        if (!DatasetService.usableObjectId(objectId)) {
            throw ApiException.invalid(Violation.of(DatasetService.OBJECT_ID_RULE, "string_pattern_mismatch", loc));
        }
        return objectId;
    }

    /** Stores the rows as a table of the project (created on a member's first write). */
    @Transactional
    public TableCreated createTable(ProjectName name, List<ObjectNode> rows) {
        if (rows == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "table", "rows"));
        }
        List<DatasetService.Row> prepared = DatasetService.prepare(rows, "body", "table", "rows");
        List<String> rowDigests = new ArrayList<>(prepared.size());
        prepared.forEach(row -> rowDigests.add(row.digest()));
        String tableDigest = Digests.ofTable(rowDigests);
        ProjectRef ref = access.writableProject(name.entity(), name.project());
        statements.storeTable(tableDigest, prepared);
        statements.addProjectTable(ref.projectId(), tableDigest);
        return new TableCreated(tableDigest, rowDigests);
    }

    /**
     * The table of rows already stored, {@code rowDigests} in order, as a table of the project (a member's write): each
     * row must be in a table the project may read, so that no row of another project is reachable by its digest.
     */
    @Transactional
    public String createTableFromDigests(ProjectName name, List<String> rowDigests, String expectedDigest) {
        String tableDigest = Digests.ofTable(rowDigests);
        if (expectedDigest != null && !expectedDigest.isEmpty() && !expectedDigest.equals(tableDigest)) {
            throw ApiException.invalid(
                    Violation.of("The content's digest is " + tableDigest, "value_error", "body", "expected_digest"));
        }
        ProjectRef ref = access.writableProject(name.entity(), name.project());
        java.util.Set<String> readable = new java.util.HashSet<>();
        if (!rowDigests.isEmpty()) {
            // the rows of the project's tables (not indexed by row: a walk of those tables' rows)
            readable.addAll(statements.readableRows(ref.projectId(), rowDigests));
        }
        for (int i = 0; i < rowDigests.size(); i++) {
            if (!readable.contains(rowDigests.get(i))) {
                throw ApiException.invalid(Violation.of("Row " + rowDigests.get(i) + " not found in " + name.id(),
                        "value_error", "body", "row_digests", i));
            }
        }
        statements.storeTable(tableDigest, rowDigests, List.of());
        statements.addProjectTable(ref.projectId(), tableDigest);
        return tableDigest;
    }

    /** A table made by {@code /table/update}: its digest and the digests of the rows the updates added. */
    public record TableUpdated(String digest, List<String> addedRowDigests) {
    }

    /** One update of {@code /table/update}: append (index null), insert at index, or pop at index (row null). */
    public record TableChange(String kind, Integer index, ObjectNode row) {
    }

    /**
     * A new table of the project: the base table's rows with the changes applied in order. The base is a table the
     * project may read; the new one is the project's (a member's write).
     */
    @Transactional
    public TableUpdated updateTable(ProjectName name, String baseDigest, List<TableChange> changes) {
        datasets.requireTable(name.entity(), name.project(), baseDigest, "body", "base_digest");
        List<String> digests = new ArrayList<>(statements.rowDigests(baseDigest));
        List<DatasetService.Row> added = new ArrayList<>();
        List<String> addedDigests = new ArrayList<>();
        for (int i = 0; i < changes.size(); i++) {
            TableChange change = changes.get(i);
            Object[] at = { "body", "updates", i, change.kind() };
            if (change.kind().equals("pop")) {
                if (change.index() == null || change.index() < 0 || change.index() >= digests.size()) {
                    throw ApiException.invalid(Violation.of("Index out of range (0 to " + (digests.size() - 1) + ")",
                            "value_error", DatasetService.at(at, "index")));
                }
                digests.remove((int) change.index());
                continue;
            }
            if (change.row() == null) {
                throw ApiException.invalid(Violation.of("Field required", "missing", DatasetService.at(at, "row")));
            }
            DatasetService.Row row = DatasetService.prepare(List.of(change.row()), DatasetService.at(at, "row")).get(0);
            int index = change.index() == null ? digests.size() : change.index();
            if (index < 0 || index > digests.size()) {
                throw ApiException.invalid(Violation.of("Index out of range (0 to " + digests.size() + ")",
                        "value_error", DatasetService.at(at, "index")));
            }
            digests.add(index, row.digest());
            added.add(row);
            addedDigests.add(row.digest());
        }
        String tableDigest = Digests.ofTable(digests);
        ProjectRef ref = access.writableProject(name.entity(), name.project());
        statements.storeTable(tableDigest, digests, added);
        statements.addProjectTable(ref.projectId(), tableDigest);
        return new TableUpdated(tableDigest, addedDigests);
    }

    /**
     * Publishes {@code val}, any JSON value (Weave's interface takes lists, text and numbers as well as objects), as a
     * version of {@code objectId}; the same content answers the existing version.
     */
    @Transactional
    public DatasetService.Created createObject(ProjectName name, String objectId, JsonNode val) {
        requireObjectId(objectId, "body", "obj", "object_id");
        if (val == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "obj", "val"));
        }
        DatasetService.requireFinite(val, new Object[] { "body", "obj", "val" });
        String canonical = CanonicalJson.write(val);
        String digest = Digests.ofText(canonical);
        boolean dataset = "Dataset".equals(text(val.get("_type")));
        String datasetName = null;
        String description = null;
        String rowsTable = null;
        if (dataset) {
            JsonNode rows = val.get("rows");
            Matcher ref = rows != null && rows.isTextual() ? TABLE_REF.matcher(rows.textValue()) : null;
            if (ref == null || !ref.matches() || ref.group(4) != null) {
                throw ApiException.invalid(Violation.of(
                        "A Dataset's rows must be a table reference " + "'weave:///" + name.id() + "/table/<digest>'",
                        "value_error", "body", "obj", "val", "rows"));
            }
            rowsTable = ref.group(3);
            JsonNode named = val.get("name");
            if (named != null && !named.isNull()
                    && (!named.isTextual() || named.textValue().isEmpty() || named.textValue().length() > 128)) {
                throw ApiException.invalid(Violation.of("A Dataset's name must be a string of 1 to 128 characters",
                        "value_error", "body", "obj", "val", "name"));
            }
            datasetName = named == null || named.isNull() ? objectId : named.textValue();
            JsonNode described = val.get("description");
            if (described != null && !described.isNull() && !described.isTextual()) {
                throw ApiException.invalid(Violation.of("A Dataset's description must be a string or null",
                        "string_type", "body", "obj", "val", "description"));
            }
            description = described == null || described.isNull() ? null : described.textValue();
        }
        ProjectRef ref = access.writableProject(name.entity(), name.project());
        requireTables(ref.projectId(), name, val, new ArrayList<>(List.of("body", "obj", "val")));
        AdvisoryLocks.lock(em, AdvisoryLocks.DATASET_VERSIONS, ref.projectId() + "/" + objectId);
        DatasetVersion version = datasets.versionOf(ref, objectId, digest);
        if (version.isPersistent()) {
            return new DatasetService.Created(version.digest, version.objectId, version.versionIndex);
        }
        version.dataset = dataset;
        version.kind = kind(val);
        version.baseObjectClass = baseObjectClass(val);
        version.val = CanonicalJson.writeInOrder(val);
        version.name = dataset ? datasetName : truncated(text(val.get("name")), objectId);
        version.description = description;
        version.tableDigest = rowsTable;
        version.persist();
        return new DatasetService.Created(digest, objectId, version.versionIndex);
    }

    /** Every table reference in {@code value} must name an existing table of this project; else a 422 naming it. */
    private void requireTables(long projectId, ProjectName name, JsonNode value, List<Object> loc) {
        if (value.isTextual()) {
            Matcher ref = TABLE_REF.matcher(value.textValue());
            if (!ref.matches()) {
                return;
            }
            if (!ref.group(1).equals(name.entity()) || !ref.group(2).equals(name.project())) {
                throw ApiException
                        .invalid(Violation.of(
                                "References a table of another project (" + ref.group(1) + "/" + ref.group(2)
                                        + "); objects may only name tables of " + name.id(),
                                "value_error", loc.toArray()));
            }
            String digest = ref.group(3);
            if (!DatasetService.TABLE_DIGEST.matcher(digest).matches() || !datasets.hasTable(projectId, digest)) {
                throw ApiException.invalid(
                        Violation.of("Table " + digest + " not found in " + name.id(), "value_error", loc.toArray()));
            }
        } else if (value.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                loc.add(field.getKey());
                requireTables(projectId, name, field.getValue(), loc);
                loc.remove(loc.size() - 1);
            }
        } else if (value.isArray()) {
            for (int i = 0; i < value.size(); i++) {
                loc.add(i);
                requireTables(projectId, name, value.get(i), loc);
                loc.remove(loc.size() - 1);
            }
        }
    }

    private static String text(JsonNode node) {
        return node != null && node.isTextual() ? node.textValue() : null;
    }

    private static String truncated(String name, String fallback) {
        if (name == null || name.isEmpty()) {
            return fallback;
        }
        return name.length() <= 128 ? name : name.substring(0, name.offsetByCodePoints(0, 127));
    }

    /** Weave's kind: an op is saved as a {@code CustomWeaveType} of type {@code Op}. */
    static String kind(JsonNode val) {
        JsonNode type = val.get("weave_type");
        return "CustomWeaveType".equals(text(val.get("_type"))) && type != null && "Op".equals(text(type.get("type")))
                ? "op"
                : "object";
    }

    /**
     * Weave's base object class: with bases {@code [..., X, "Object", "BaseModel"]} it is {@code X}, with bases
     * {@code ["Object", "BaseModel"]} the object's own class; null otherwise.
     */
    static String baseObjectClass(JsonNode val) {
        JsonNode bases = val.get("_bases");
        if (bases == null || !bases.isArray() || bases.size() < 2) {
            return null;
        }
        int n = bases.size();
        if (!"BaseModel".equals(text(bases.get(n - 1))) || !"Object".equals(text(bases.get(n - 2)))) {
            return null;
        }
        String base = n > 2 ? text(bases.get(n - 3)) : text(val.get("_class_name"));
        return base == null || base.length() > 128 ? null : base;
    }

    /** One version of an object of any kind; unknown: 404. */
    @Transactional
    public Found read(ProjectName name, String objectId, String digest) {
        requireObjectId(objectId, "body", "object_id");
        VersionSelector selector = VersionSelector.parse(digest, "body", "digest");
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        String where = selector.latest() ? ""
                : selector.index() != null ? " and versionIndex = ?3" : " and digest = ?3";
        TypedQuery<DatasetVersion> query = em
                .createQuery("from DatasetVersion where projectId = ?1 and objectId = ?2 and deletedAt is null" + where
                        + " order by versionIndex desc", DatasetVersion.class)
                .setParameter(1, ref.projectId()).setParameter(2, objectId).setMaxResults(1);
        if (!selector.latest()) {
            query.setParameter(3, selector.index() != null ? selector.index() : selector.digest());
        }
        DatasetVersion version = query.getResultList().stream().findFirst().orElseThrow(
                () -> ApiException.notFound("Object " + name.id() + "/" + objectId + ":" + selector + " not found"));
        return new Found(version, name, selector.latest() || version.versionIndex == latestIndex(version));
    }

    private int latestIndex(DatasetVersion version) {
        return em.createQuery("""
                select max(versionIndex) from DatasetVersion
                where projectId = ?1 and objectId = ?2 and deletedAt is null""", Integer.class)
                .setParameter(1, version.projectId).setParameter(2, version.objectId).getSingleResult();
    }

    /** Versions of the project's objects by object id and index, filtered as asked. */
    @Transactional
    public List<Found> query(ProjectName name, List<String> objectIds, List<String> baseClasses, Boolean latestOnly,
            Boolean isOp, Integer limit, Integer offset) {
        int max = QueryParams.limit(limit, DatasetService.DEFAULT_LIST_LIMIT, 0, DatasetService.MAX_LIST_LIMIT);
        int skip = QueryParams.offset(offset);
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        if (max == 0) {
            return List.of();
        }
        String latest = "(select max(w.versionIndex) from DatasetVersion w where w.projectId = v.projectId"
                + " and w.objectId = v.objectId and w.deletedAt is null)";
        StringBuilder hql = new StringBuilder(
                "from DatasetVersion v where v.projectId = :project and v.deletedAt is null");
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("project", ref.projectId());
        if (objectIds != null) {
            hql.append(" and v.objectId in :ids");
            params.put("ids", objectIds.isEmpty() ? List.of("") : objectIds);
        }
        if (baseClasses != null) {
            hql.append(" and v.baseObjectClass in :bases");
            params.put("bases", baseClasses.isEmpty() ? List.of("") : baseClasses);
        }
        if (isOp != null) {
            hql.append(isOp ? " and v.kind = 'op'" : " and v.kind <> 'op'");
        }
        if (Boolean.TRUE.equals(latestOnly)) {
            hql.append(" and v.versionIndex = ").append(latest);
        }
        hql.append(" order by v.objectId, v.versionIndex");
        TypedQuery<DatasetVersion> query = em.createQuery(hql.toString(), DatasetVersion.class);
        params.forEach(query::setParameter);
        List<DatasetVersion> versions = query.setFirstResult(skip).setMaxResults(max).getResultList();
        Map<String, Integer> latestIndexes = new java.util.HashMap<>();
        if (!versions.isEmpty()) {
            em.createQuery("""
                    select objectId, max(versionIndex) from DatasetVersion
                    where projectId = ?1 and objectId in ?2 and deletedAt is null group by objectId""", Object[].class)
                    .setParameter(1, ref.projectId())
                    .setParameter(2, versions.stream().map(v -> v.objectId).distinct().toList()).getResultList()
                    .forEach(r -> latestIndexes.put((String) r[0], (Integer) r[1]));
        }
        return versions.stream()
                .map(v -> new Found(v, name, Integer.valueOf(v.versionIndex).equals(latestIndexes.get(v.objectId))))
                .toList();
    }

    /** Soft-deletes the named versions of an object of any kind, or all; an unknown one is a 404, nothing deleted. */
    @Transactional
    public int delete(ProjectName name, String objectId, List<String> digests) {
        requireObjectId(objectId, "body", "object_id");
        List<VersionSelector> selectors = new ArrayList<>();
        if (digests != null) {
            for (int i = 0; i < digests.size(); i++) {
                selectors.add(VersionSelector.parse(digests.get(i), "body", "digests", i));
            }
        }
        ProjectRef ref = access.project(name.entity(), name.project(), Role.MEMBER);
        Map<Long, DatasetVersion> doomed = new LinkedHashMap<>();
        if (selectors.isEmpty()) {
            List<DatasetVersion> all = DatasetVersion.list("projectId = ?1 and objectId = ?2 and deletedAt is null",
                    ref.projectId(), objectId);
            if (all.isEmpty()) {
                throw ApiException.notFound("Object " + name.id() + "/" + objectId + " not found");
            }
            all.forEach(v -> doomed.put(v.id, v));
        } else {
            for (VersionSelector selector : selectors) {
                DatasetVersion v = read(name, objectId, selector.toString()).version();
                doomed.put(v.id, v);
            }
        }
        OffsetDateTime now = OffsetDateTime.now();
        doomed.values().forEach(v -> v.deletedAt = now);
        return doomed.size();
    }

    /** The value as published; a dataset created through v2 as the object its digest is computed from. */
    static JsonNode val(DatasetVersion version, String entity, String project,
            com.fasterxml.jackson.databind.ObjectMapper json) {
        if (version.val != null) {
            try {
                return json.readTree(version.val);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("A stored object is not JSON", e);
            }
        }
        ObjectNode object = JsonNodeFactory.instance.objectNode();
        object.put("_type", "Dataset");
        object.put("_class_name", "Dataset");
        object.putArray("_bases").add("Object").add("BaseModel");
        object.put("name", version.name);
        object.put("description", version.description);
        object.put("rows", "weave:///" + entity + "/" + project + "/table/" + version.tableDigest);
        return object;
    }
}

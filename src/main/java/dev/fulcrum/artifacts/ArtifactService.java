package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;
import org.hibernate.jdbc.ReturningWork;
import org.jboss.resteasy.reactive.multipart.FileUpload;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Access.RegistryRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactNames.Reference;
import dev.fulcrum.artifacts.ArtifactNames.Selector;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.AdvisoryLocks;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.CanonicalJson;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.NulCharacters;
import dev.fulcrum.platform.QueryParams;
import dev.fulcrum.platform.StoredJson;

/**
 * Artifact collections, versions, aliases, tags and registry links. File contents go to the {@link BlobStore} before
 * the database transaction starts; the transaction then locks the collection row, so concurrent writers of one
 * collection get distinct version indexes and a consistent {@code latest}. Every change writes its events in its own
 * transaction.
 */
@ApplicationScoped
public class ArtifactService {

    static final String LATEST = "latest";
    public static final int DEFAULT_PAGE = 100;
    public static final int MAX_PAGE = 1000;

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    ObjectMapper json;

    @Inject
    StoredJson storedJson;

    @Inject
    PlatformEvents events;

    @Inject
    BlobStore blobs;

    @Inject
    FulcrumConfig config;

    public record CollectionView(long id, String name, String type, String description, String entity, String project,
            int versionCount, String createdBy, OffsetDateTime createdAt) {
    }

    public record FileView(String path, long size, String digest, String contentType) {
    }

    public record VersionView(long id, long collectionId, long projectId, String entity, String project,
            String collection, String type, int index, String digest, String description, ObjectNode metadata,
            long size, int fileCount, List<String> aliases, List<String> tags, String createdBy,
            OffsetDateTime createdAt, List<FileView> files, String registry, String source) {

        public String version() {
            return "v" + index;
        }

        public String reference() {
            return source != null ? source : Reference.of(entity, project, collection, index);
        }
    }

    public record Created(VersionView version, boolean isNew) {
    }

    public record LinkView(String registry, String collection, int index, String source, String createdBy,
            OffsetDateTime createdAt) {
    }

    public record Page(List<VersionView> versions, Integer nextOffset) {
    }

    /** A stored file as uploaded. */
    record Upload(String path, String digest, long size, String contentType) {
    }

    // ---------------------------------------------------------------- collections

    @Transactional
    public CollectionView createCollection(String entity, String project, String name, String type,
            String description) {
        ArtifactNames.name(name, "body", "name");
        ArtifactNames.type(type, "body", "type");
        ArtifactNames.description(description, "body", "description");
        ProjectRef ref = access.writableProject(entity, project);
        if (!insertCollection(ref.projectId(), name, type, description)) {
            throw ApiException.conflict("Collection " + name + " exists in " + entity + "/" + project);
        }
        return collection(ref, name);
    }

    private boolean insertCollection(long projectId, String name, String type, String description) {
        return jdbc(c -> {
            try (PreparedStatement insert = c.prepareStatement("""
                    insert into artifact_collections (project_id, name, type, description, created_by)
                    values (?, ?, ?, ?, ?) on conflict (project_id, name) do nothing""")) {
                insert.setLong(1, projectId);
                insert.setString(2, name);
                insert.setString(3, type);
                insert.setString(4, description);
                insert.setLong(5, access.caller().userId());
                return insert.executeUpdate() == 1;
            }
        });
    }

    @Transactional
    public List<CollectionView> listCollections(String entity, String project, String type) {
        ProjectRef ref = access.readableProject(entity, project);
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement(
                    COLLECTION_QUERY + " where c.project_id = ? and (?::text is null or c.type = ?) order by c.name")) {
                query.setLong(1, ref.projectId());
                setString(query, 2, type);
                setString(query, 3, type);
                List<CollectionView> all = new ArrayList<>();
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        all.add(collectionView(rs, ref));
                    }
                }
                return all;
            }
        });
    }

    @Transactional
    public CollectionView getCollection(String entity, String project, String name) {
        ArtifactNames.name(name, "path", "collection");
        return collection(access.readableProject(entity, project), name);
    }

    @Transactional
    public void deleteCollection(String entity, String project, String name) {
        ArtifactNames.name(name, "path", "collection");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        int deleted = jdbc(c -> {
            try (PreparedStatement delete = c
                    .prepareStatement("delete from artifact_collections where project_id = ? and name = ?")) {
                delete.setLong(1, ref.projectId());
                delete.setString(2, name);
                return delete.executeUpdate();
            }
        });
        if (deleted == 0) {
            throw collectionNotFound(ref, name);
        }
    }

    private static final String COLLECTION_QUERY = """
            select c.id, c.name, c.type, c.description, u.username, c.created_at,
            (select count(*) from artifact_versions v where v.collection_id = c.id)
            from artifact_collections c left join users u on u.id = c.created_by""";

    private CollectionView collection(ProjectRef ref, String name) {
        CollectionView found = jdbc(c -> {
            try (PreparedStatement query = c
                    .prepareStatement(COLLECTION_QUERY + " where c.project_id = ? and c.name = ?")) {
                query.setLong(1, ref.projectId());
                query.setString(2, name);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? collectionView(rs, ref) : null;
                }
            }
        });
        if (found == null) {
            throw collectionNotFound(ref, name);
        }
        return found;
    }

    private static CollectionView collectionView(ResultSet rs, ProjectRef ref) throws SQLException {
        return new CollectionView(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), ref.entity(),
                ref.project(), rs.getInt(7), rs.getString(5), rs.getObject(6, OffsetDateTime.class));
    }

    private static ApiException collectionNotFound(ProjectRef ref, String name) {
        return ApiException.notFound("Collection " + name + " not found in " + ref.entity() + "/" + ref.project());
    }

    // ---------------------------------------------------------------- versions

    /**
     * Stores the files in the blob store, then creates the version in one transaction. Identical content (same paths,
     * file digests and metadata) returns the existing version.
     */
    public Created createVersion(String entity, String project, String collection, List<FileUpload> files,
            String metadataText, String description, String type) {
        ArtifactNames.name(collection, "path", "collection");
        if (type != null) {
            ArtifactNames.type(type, "body", "type");
        }
        NulCharacters.check(description, "body", "description");
        ArtifactNames.description(description, "body", "description");
        ObjectNode metadata = parseMetadata(metadataText);
        if (files == null || files.isEmpty()) {
            throw ApiException.invalid(Violation.of("At least one file part is needed", "missing", "body", "file"));
        }
        Set<String> paths = new HashSet<>();
        for (int i = 0; i < files.size(); i++) {
            String path = ArtifactNames.path(files.get(i).fileName(), "body", "file", i);
            if (!paths.add(path)) {
                throw ApiException.invalid(
                        Violation.of("The file " + path + " is given twice", "value_error", "body", "file", i));
            }
        }
        // nothing is created before every check passed: the project comes with the version, in storeVersion
        Access.EntityRef owner = access.entity(entity, Role.MEMBER);
        if (type == null && !collectionExists(owner.entityId(), project, collection)) {
            throw ApiException.notFound("Collection " + collection + " not found in " + entity + "/" + project);
        }
        long max = config.artifacts().maxFileBytes();
        for (FileUpload file : files) {
            if (file.size() > max) {
                throw ApiException.payloadTooLarge("The file " + file.fileName() + " is larger than " + max + " bytes");
            }
        }
        List<Upload> uploads = new ArrayList<>(files.size());
        for (FileUpload file : files) {
            try (InputStream in = Files.newInputStream(file.uploadedFile())) {
                BlobStore.Blob blob = blobs.put(in, max);
                uploads.add(new Upload(file.fileName(), blob.digest(), blob.size(), file.contentType()));
            } catch (BlobStore.TooLarge e) {
                throw ApiException.payloadTooLarge("The file " + file.fileName() + " is larger than " + max + " bytes");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        uploads.sort(Comparator.comparing(Upload::path));
        return storeVersion(entity, project, collection, type, description, metadata, uploads);
    }

    @Transactional
    boolean collectionExists(long entityId, String project, String collection) {
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement("""
                    select 1 from artifact_collections c join projects p on p.id = c.project_id
                    where p.entity_id = ? and p.name = ? and c.name = ?""")) {
                query.setLong(1, entityId);
                query.setString(2, project);
                query.setString(3, collection);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    private ObjectNode parseMetadata(String text) {
        if (text == null || text.isBlank()) {
            return JsonNodeFactory.instance.objectNode();
        }
        try {
            JsonNode node = json.readTree(text);
            if (node instanceof ObjectNode object) {
                NulCharacters.check(object, "body", "metadata");
                if (!isFinite(object)) {
                    throw ApiException
                            .invalid(Violation.of("Numbers must be finite", "finite_number", "body", "metadata"));
                }
                return object;
            }
        } catch (JsonProcessingException e) {
            // answered below
        }
        throw ApiException.invalid(Violation.of("Must be a JSON object", "dict_type", "body", "metadata"));
    }

    /** JSON text cannot hold NaN or infinities; a number too large for a double would be stored as one. */
    static boolean isFinite(JsonNode value) {
        if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            return false;
        }
        for (JsonNode child : value) {
            if (!isFinite(child)) {
                return false;
            }
        }
        return true;
    }

    @Transactional
    Created storeVersion(String entity, String project, String collection, String type, String description,
            ObjectNode metadata, List<Upload> uploads) {
        ProjectRef ref = access.writableProject(entity, project);
        Long collectionId = lockCollection(ref.projectId(), collection);
        if (collectionId == null) {
            if (type == null) {
                throw collectionNotFound(ref, collection);
            }
            insertCollection(ref.projectId(), collection, type, null);
            collectionId = lockCollection(ref.projectId(), collection);
        }
        long id = collectionId;
        String digest = versionDigest(uploads, metadata);
        Long existing = jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement(
                    "select id from artifact_versions where collection_id = ? and digest = ? order by version_index limit 1")) {
                query.setLong(1, id);
                query.setString(2, digest);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : null;
                }
            }
        });
        if (existing != null) {
            return new Created(version(ref, existing, true), false);
        }
        long size = uploads.stream().mapToLong(Upload::size).sum();
        long versionId = jdbc(
                c -> insertVersion(c, id, digest, description, storedJson.write(metadata), size, uploads));
        VersionView version = version(ref, versionId, false);
        Caller caller = access.caller();
        events.record(EventType.CREATE_ARTIFACT, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                payload(version, version.version()));
        setAlias(id, LATEST, versionId);
        ObjectNode aliasPayload = payload(version, LATEST);
        aliasPayload.put("alias", LATEST);
        events.record(EventType.ADD_ARTIFACT_ALIAS, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                aliasPayload);
        return new Created(version(ref, versionId, true), true);
    }

    private long insertVersion(Connection c, long collectionId, String digest, String description, String metadata,
            long size, List<Upload> uploads) throws SQLException {
        long versionId;
        try (PreparedStatement insert = c.prepareStatement("""
                insert into artifact_versions (collection_id, version_index, digest, description, metadata, size,
                file_count, created_by)
                select ?, coalesce(max(version_index), -1) + 1, ?, ?, ?::jsonb, ?, ?, ?
                from artifact_versions where collection_id = ? returning id""")) {
            insert.setLong(1, collectionId);
            insert.setString(2, digest);
            insert.setString(3, description);
            insert.setString(4, metadata);
            insert.setLong(5, size);
            insert.setInt(6, uploads.size());
            insert.setLong(7, access.caller().userId());
            insert.setLong(8, collectionId);
            try (ResultSet rs = insert.executeQuery()) {
                rs.next();
                versionId = rs.getLong(1);
            }
        }
        try (PreparedStatement files = c.prepareStatement(
                """
                        insert into artifact_files (version_id, path, digest, size, content_type)
                        select ?, p, d, s, t from unnest(?::varchar[], ?::char(64)[], ?::bigint[], ?::varchar[]) as f(p, d, s, t)""")) {
            files.setLong(1, versionId);
            files.setArray(2, c.createArrayOf("varchar", uploads.stream().map(Upload::path).toArray()));
            files.setArray(3, c.createArrayOf("varchar", uploads.stream().map(Upload::digest).toArray()));
            files.setArray(4, c.createArrayOf("bigint", uploads.stream().map(Upload::size).toArray()));
            files.setArray(5, c.createArrayOf("varchar", uploads.stream().map(Upload::contentType).toArray()));
            files.executeUpdate();
        }
        return versionId;
    }

    /** SHA-256 over the canonical JSON of the sorted (path, digest) pairs and the metadata. */
    static String versionDigest(List<Upload> uploads, ObjectNode metadata) {
        ObjectNode manifest = JsonNodeFactory.instance.objectNode();
        ArrayNode files = manifest.putArray("files");
        for (Upload upload : uploads) {
            files.addObject().put("path", upload.path()).put("digest", upload.digest());
        }
        manifest.set("metadata", metadata);
        return HexFormat.of().formatHex(
                FileSystemBlobStore.sha256().digest(CanonicalJson.write(manifest).getBytes(StandardCharsets.UTF_8)));
    }

    /** Locks the collection row for the rest of the transaction; null if there is none. */
    private Long lockCollection(long projectId, String name) {
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement(
                    "select id from artifact_collections where project_id = ? and name = ? for update")) {
                query.setLong(1, projectId);
                query.setString(2, name);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : null;
                }
            }
        });
    }

    @Transactional
    public Page listVersions(String entity, String project, String collection, Integer limit, Integer offset) {
        ArtifactNames.name(collection, "path", "collection");
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        int skip = QueryParams.offset(offset);
        ProjectRef ref = access.readableProject(entity, project);
        long collectionId = collection(ref, collection).id();
        List<VersionView> versions = jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement(
                    VERSION_QUERY + " where v.collection_id = ? order by v.version_index desc limit ? offset ?")) {
                query.setLong(1, collectionId);
                query.setInt(2, size + 1);
                query.setInt(3, skip);
                List<VersionView> all = new ArrayList<>();
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        all.add(versionView(rs, ref, null));
                    }
                }
                return all;
            }
        });
        return page(versions, size, skip);
    }

    @Transactional
    public VersionView getVersion(String entity, String project, String collection, String version) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ProjectRef ref = access.readableProject(entity, project);
        return version(ref, find(ref, collection, selector), true);
    }

    @Transactional
    public VersionView resolve(String reference) {
        Reference ref = Reference.parse(reference, "query", "ref");
        if (!Names.isEntity(ref.entity()) || !Names.isProject(ref.project())) {
            throw ApiException.notFound("No artifact " + reference);
        }
        ProjectRef project = access.readableProject(ref.entity(), ref.project());
        return version(project, find(project, ref.collection(), ref.selector()), true);
    }

    /** A file of a version, for download. */
    @Transactional
    public FileView file(String entity, String project, String collection, String version, String path) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        ProjectRef ref = access.readableProject(entity, project);
        VersionView found = version(ref, find(ref, collection, selector), true);
        return fileOf(found, path);
    }

    private static FileView fileOf(VersionView version, String path) {
        return version.files().stream().filter(f -> f.path().equals(path)).findFirst()
                .orElseThrow(() -> ApiException.notFound("No file " + path + " in " + version.reference()));
    }

    private long find(ProjectRef ref, String collection, Selector selector) {
        long collectionId = collection(ref, collection).id();
        Long id = jdbc(c -> {
            String sql = selector.index() != null
                    ? "select id from artifact_versions where collection_id = ? and version_index = ?"
                    : "select version_id from artifact_aliases where collection_id = ? and alias = ?";
            try (PreparedStatement query = c.prepareStatement(sql)) {
                query.setLong(1, collectionId);
                if (selector.index() != null) {
                    query.setInt(2, selector.index());
                } else {
                    query.setString(2, selector.alias());
                }
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : null;
                }
            }
        });
        if (id == null) {
            throw ApiException.notFound(
                    "No version " + selector + " of " + ref.entity() + "/" + ref.project() + "/" + collection);
        }
        return id;
    }

    private static final String VERSION_QUERY = """
            select v.id, v.collection_id, c.name, c.type, v.version_index, v.digest, v.description, v.metadata::text,
            v.size, v.file_count, u.username, v.created_at,
            array(select a.alias from artifact_aliases a where a.version_id = v.id order by a.alias),
            array(select t.tag from artifact_tags t where t.version_id = v.id order by t.tag)
            from artifact_versions v join artifact_collections c on c.id = v.collection_id
            left join users u on u.id = v.created_by""";

    private VersionView version(ProjectRef ref, long versionId, boolean withFiles) {
        return jdbc(c -> {
            List<FileView> files = withFiles ? files(c, versionId) : null;
            try (PreparedStatement query = c.prepareStatement(VERSION_QUERY + " where v.id = ?")) {
                query.setLong(1, versionId);
                try (ResultSet rs = query.executeQuery()) {
                    rs.next();
                    return versionView(rs, ref, files);
                }
            }
        });
    }

    private static List<FileView> files(Connection c, long versionId) throws SQLException {
        try (PreparedStatement query = c.prepareStatement(
                "select path, size, digest, content_type from artifact_files where version_id = ? order by path")) {
            query.setLong(1, versionId);
            List<FileView> files = new ArrayList<>();
            try (ResultSet rs = query.executeQuery()) {
                while (rs.next()) {
                    files.add(new FileView(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4)));
                }
            }
            return files;
        }
    }

    private VersionView versionView(ResultSet rs, ProjectRef ref, List<FileView> files) throws SQLException {
        return new VersionView(rs.getLong(1), rs.getLong(2), ref.projectId(), ref.entity(), ref.project(),
                rs.getString(3), rs.getString(4), rs.getInt(5), rs.getString(6), rs.getString(7),
                storedJson.readObject(rs.getString(8)), rs.getLong(9), rs.getInt(10), strings(rs.getArray(13)),
                strings(rs.getArray(14)), rs.getString(11), rs.getObject(12, OffsetDateTime.class), files, null, null);
    }

    private static List<String> strings(Array array) throws SQLException {
        return Arrays.asList((String[]) array.getArray());
    }

    /**
     * Deletes one version with its files' records, aliases and tags (file contents stay in the content-addressed
     * store). When it held {@code latest}, the highest remaining version gets it.
     */
    @Transactional
    public void deleteVersion(String entity, String project, String collection, String version) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        Long collectionId = lockCollection(ref.projectId(), collection);
        if (collectionId == null) {
            throw collectionNotFound(ref, collection);
        }
        long versionId = find(ref, collection, selector);
        jdbc(c -> {
            try (PreparedStatement delete = c.prepareStatement("delete from artifact_versions where id = ?")) {
                delete.setLong(1, versionId);
                delete.executeUpdate();
            }
            try (PreparedStatement latest = c.prepareStatement("""
                    insert into artifact_aliases (collection_id, alias, version_id)
                    select collection_id, ?, id from artifact_versions where collection_id = ?
                    order by version_index desc limit 1 on conflict (collection_id, alias) do nothing""")) {
                latest.setString(1, LATEST);
                latest.setLong(2, collectionId);
                return latest.executeUpdate();
            }
        });
    }

    // ---------------------------------------------------------------- aliases and tags

    /** Gives the version the alias, moving it from another version of the collection. */
    @Transactional
    public VersionView addAlias(String entity, String project, String collection, String version, String alias) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ArtifactNames.alias(alias, "path", "alias");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        Long collectionId = lockCollection(ref.projectId(), collection);
        if (collectionId == null) {
            throw collectionNotFound(ref, collection);
        }
        long versionId = find(ref, collection, selector);
        boolean added = setAlias(collectionId, alias, versionId);
        VersionView changed = version(ref, versionId, true); // read once: the event's payload and the answer
        if (added) {
            ObjectNode payload = payload(changed, alias);
            payload.put("alias", alias);
            Caller caller = access.caller();
            events.record(EventType.ADD_ARTIFACT_ALIAS, Scope.project(ref.projectId()), caller.userId(),
                    caller.username(), payload);
        }
        return changed;
    }

    /** Points the alias at the version; false if it did already. */
    private boolean setAlias(long collectionId, String alias, long versionId) {
        return jdbc(c -> {
            try (PreparedStatement upsert = c.prepareStatement("""
                    insert into artifact_aliases (collection_id, alias, version_id) values (?, ?, ?)
                    on conflict (collection_id, alias) do update set version_id = excluded.version_id,
                    created_at = now() where artifact_aliases.version_id <> excluded.version_id""")) {
                upsert.setLong(1, collectionId);
                upsert.setString(2, alias);
                upsert.setLong(3, versionId);
                return upsert.executeUpdate() == 1;
            }
        });
    }

    @Transactional
    public VersionView removeAlias(String entity, String project, String collection, String version, String alias) {
        return removeLabel(entity, project, collection, version, Label.ALIAS, alias);
    }

    @Transactional
    public VersionView addTag(String entity, String project, String collection, String version, String tag) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ArtifactNames.name(tag, "path", "tag");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        long versionId = find(ref, collection, selector);
        boolean added = jdbc(c -> {
            try (PreparedStatement insert = c.prepareStatement(
                    "insert into artifact_tags (version_id, tag) values (?, ?) on conflict do nothing")) {
                insert.setLong(1, versionId);
                insert.setString(2, tag);
                return insert.executeUpdate() == 1;
            }
        });
        VersionView changed = version(ref, versionId, true); // read once: the event's payload and the answer
        if (added) {
            ObjectNode payload = payload(changed, changed.version());
            payload.put("tag", tag);
            Caller caller = access.caller();
            events.record(EventType.ADD_ARTIFACT_TAG, Scope.project(ref.projectId()), caller.userId(),
                    caller.username(), payload);
        }
        return changed;
    }

    @Transactional
    public VersionView removeTag(String entity, String project, String collection, String version, String tag) {
        return removeLabel(entity, project, collection, version, Label.TAG, tag);
    }

    /** An alias or a tag: they differ in their name rule and their tables. */
    enum Label {
        ALIAS("alias", "artifact_aliases", "registry_link_aliases"), TAG("tag", "artifact_tags", "registry_link_tags");

        final String column;
        final String versionTable;
        final String linkTable;

        Label(String column, String versionTable, String linkTable) {
            this.column = column;
            this.versionTable = versionTable;
            this.linkTable = linkTable;
        }

        void check(String value) {
            if (this == ALIAS) {
                ArtifactNames.alias(value, "path", column);
            } else {
                ArtifactNames.name(value, "path", column);
            }
        }
    }

    private VersionView removeLabel(String entity, String project, String collection, String version, Label label,
            String value) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        label.check(value);
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        long versionId = find(ref, collection, selector);
        if (deleteLabel(label.versionTable, "version_id", label.column, versionId, value) == 0) {
            throw ApiException.notFound("Version " + selector + " has no " + label.column + " " + value);
        }
        return version(ref, versionId, true);
    }

    /** Deletes one alias or tag row; the table and column names are constants of {@link Label}, never input. */
    private int deleteLabel(String table, String owner, String column, long ownerId, String value) {
        return jdbc(c -> {
            try (PreparedStatement delete = c
                    .prepareStatement("delete from " + table + " where " + owner + " = ? and " + column + " = ?")) {
                delete.setLong(1, ownerId);
                delete.setString(2, value);
                return delete.executeUpdate();
            }
        });
    }

    // ---------------------------------------------------------------- registry links

    public record Linked(LinkView link, boolean isNew) {
    }

    /** Links a project version into a registry collection; linking it again answers the existing link. */
    @Transactional
    public Linked link(String entity, String project, String collection, String version, String registry,
            String registryCollection) {
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        Names.requireEntity(registry, "body", "registry");
        ArtifactNames.name(registryCollection, "body", "collection");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        long versionId = find(ref, collection, selector);
        RegistryRef target = access.registry(registry, Role.MEMBER);
        AdvisoryLocks.lock(em, AdvisoryLocks.REGISTRY_LINKS, target.registryId() + "/" + registryCollection);
        VersionView source = version(ref, versionId, false);
        LinkView existing = findLink(target, registryCollection, versionId, source.reference());
        if (existing != null) {
            return new Linked(existing, false);
        }
        jdbc(c -> {
            try (PreparedStatement insert = c.prepareStatement("""
                    insert into registry_links (registry_id, collection_name, link_index, version_id, created_by)
                    select ?, ?, coalesce(max(link_index), -1) + 1, ?, ?
                    from registry_links where registry_id = ? and collection_name = ?""")) {
                insert.setLong(1, target.registryId());
                insert.setString(2, registryCollection);
                insert.setLong(3, versionId);
                insert.setLong(4, access.caller().userId());
                insert.setLong(5, target.registryId());
                insert.setString(6, registryCollection);
                return insert.executeUpdate();
            }
        });
        LinkView link = findLink(target, registryCollection, versionId, source.reference());
        ObjectNode payload = payload(source, source.version());
        payload.put("artifact_collection_name", registryCollection);
        payload.put("source_collection_name", source.collection());
        payload.put("registry_name", registry);
        payload.put("registry_version_index", link.index());
        payload.put("registry_version_string", registry + "/" + registryCollection + ":v" + link.index());
        Caller caller = access.caller();
        events.record(EventType.LINK_ARTIFACT, new Scope(ref.projectId(), target.registryId()), caller.userId(),
                caller.username(), payload);
        long linkId = findLinked(target, registryCollection, new Selector(link.index(), null)).linkId();
        recordLinked(EventType.ADD_ARTIFACT_ALIAS, target, ref.projectId(),
                linkedView(target, registryCollection, linkId), LATEST, "alias", LATEST);
        return new Linked(link, true);
    }

    private LinkView findLink(RegistryRef registry, String collection, long versionId, String source) {
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement("""
                    select l.link_index, u.username, l.created_at from registry_links l
                    left join users u on u.id = l.created_by
                    where l.registry_id = ? and l.collection_name = ? and l.version_id = ?""")) {
                query.setLong(1, registry.registryId());
                query.setString(2, collection);
                query.setLong(3, versionId);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next()
                            ? new LinkView(registry.registry(), collection, rs.getInt(1), source, rs.getString(2),
                                    rs.getObject(3, OffsetDateTime.class))
                            : null;
                }
            }
        });
    }

    private static final String LINKED_QUERY = """
            select l.link_index, l.version_id, en.name, p.name, p.id,
            (select max(link_index) from registry_links m where m.registry_id = l.registry_id
             and m.collection_name = l.collection_name),
            array(select a.alias from registry_link_aliases a where a.link_id = l.id order by a.alias),
            array(select t.tag from registry_link_tags t where t.link_id = l.id order by t.tag)
            from registry_links l join artifact_versions v on v.id = l.version_id
            join artifact_collections c on c.id = v.collection_id
            join projects p on p.id = c.project_id join entities en on en.id = p.entity_id
            where l.registry_id = ? and l.collection_name = ?""";

    /** Versions linked into a registry collection, newest link first; readable by registry members. */
    @Transactional
    public Page listLinked(String registry, String collection, Integer limit, Integer offset) {
        Names.requireEntity(registry, "path", "registry");
        ArtifactNames.name(collection, "path", "collection");
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        int skip = QueryParams.offset(offset);
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        List<VersionView> versions = jdbc(c -> {
            try (PreparedStatement query = c
                    .prepareStatement(LINKED_QUERY + " order by l.link_index desc limit ? offset ?")) {
                query.setLong(1, ref.registryId());
                query.setString(2, collection);
                query.setInt(3, size + 1);
                query.setInt(4, skip);
                return linkedViews(c, query, ref, collection, false);
            }
        });
        if (versions.isEmpty() && skip == 0) {
            throw ApiException.notFound("No collection " + collection + " in registry " + registry);
        }
        return page(versions, size, skip);
    }

    /** A linked version: {@code v<N>} of the registry collection, {@code latest} or an alias of the collection. */
    @Transactional
    public VersionView getLinked(String registry, String collection, String version) {
        Names.requireEntity(registry, "path", "registry");
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        return linkedView(ref, collection, findLinked(ref, collection, selector).linkId());
    }

    @Transactional
    public FileView linkedFile(String registry, String collection, String version, String path) {
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        return fileOf(getLinked(registry, collection, version), path);
    }

    private List<VersionView> linkedViews(Connection c, PreparedStatement query, RegistryRef registry,
            String collection, boolean withFiles) throws SQLException {
        record Row(int index, long versionId, String entity, String project, long projectId, int newest,
                List<String> aliases, List<String> tags) {
        }
        List<Row> rows = new ArrayList<>();
        try (ResultSet rs = query.executeQuery()) {
            while (rs.next()) {
                rows.add(new Row(rs.getInt(1), rs.getLong(2), rs.getString(3), rs.getString(4), rs.getLong(5),
                        rs.getInt(6), strings(rs.getArray(7)), strings(rs.getArray(8))));
            }
        }
        List<VersionView> views = new ArrayList<>(rows.size());
        for (Row row : rows) {
            VersionView source = version(new ProjectRef(0, row.entity(), row.projectId(), row.project(), Role.VIEWER),
                    row.versionId(), withFiles);
            views.add(new VersionView(source.id(), source.collectionId(), source.projectId(), source.entity(),
                    source.project(), collection, source.type(), row.index(), source.digest(), source.description(),
                    source.metadata(), source.size(), source.fileCount(),
                    linkAliases(row.aliases(), row.index() == row.newest()), row.tags(), source.createdBy(),
                    source.createdAt(), source.files(), registry.registry(), source.reference()));
        }
        return views;
    }

    private static List<String> linkAliases(List<String> stored, boolean newest) {
        List<String> aliases = new ArrayList<>(stored);
        if (newest) {
            aliases.add(LATEST);
            aliases.sort(Comparator.naturalOrder());
        }
        return aliases;
    }

    /** A link of a registry collection and the project of its version. */
    private record LinkRef(long linkId, long projectId) {
    }

    /** The link a selector names in a registry collection: {@code v<N>}, {@code latest} or an alias. */
    private LinkRef findLinked(RegistryRef registry, String collection, Selector selector) {
        LinkRef found = jdbc(c -> {
            String which;
            if (selector.index() != null) {
                which = " and l.link_index = ?";
            } else if (LATEST.equals(selector.alias())) {
                which = " order by l.link_index desc limit 1";
            } else {
                which = " and l.id = (select a.link_id from registry_link_aliases a where a.registry_id = l.registry_id"
                        + " and a.collection_name = l.collection_name and a.alias = ?)";
            }
            try (PreparedStatement query = c.prepareStatement("""
                    select l.id, c.project_id from registry_links l join artifact_versions v on v.id = l.version_id
                    join artifact_collections c on c.id = v.collection_id
                    where l.registry_id = ? and l.collection_name = ?""" + which)) {
                query.setLong(1, registry.registryId());
                query.setString(2, collection);
                if (selector.index() != null) {
                    query.setInt(3, selector.index());
                } else if (!LATEST.equals(selector.alias())) {
                    query.setString(3, selector.alias());
                }
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? new LinkRef(rs.getLong(1), rs.getLong(2)) : null;
                }
            }
        });
        if (found == null) {
            throw ApiException.notFound(
                    "No version " + selector + " in collection " + collection + " of registry " + registry.registry());
        }
        return found;
    }

    /** Gives a linked version an alias of its registry collection (registry members), moving it from another link. */
    @Transactional
    public VersionView addLinkedAlias(String registry, String collection, String version, String alias) {
        Names.requireEntity(registry, "path", "registry");
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ArtifactNames.alias(alias, "path", "alias");
        RegistryRef ref = access.registry(registry, Role.MEMBER);
        AdvisoryLocks.lock(em, AdvisoryLocks.REGISTRY_LINKS, ref.registryId() + "/" + collection);
        LinkRef link = findLinked(ref, collection, selector);
        boolean changed = jdbc(c -> {
            try (PreparedStatement upsert = c.prepareStatement("""
                    insert into registry_link_aliases (registry_id, collection_name, alias, link_id) values (?, ?, ?, ?)
                    on conflict (registry_id, collection_name, alias) do update set link_id = excluded.link_id,
                    created_at = now() where registry_link_aliases.link_id <> excluded.link_id""")) {
                upsert.setLong(1, ref.registryId());
                upsert.setString(2, collection);
                upsert.setString(3, alias);
                upsert.setLong(4, link.linkId());
                return upsert.executeUpdate() == 1;
            }
        });
        VersionView linked = linkedView(ref, collection, link.linkId());
        if (changed) {
            recordLinked(EventType.ADD_ARTIFACT_ALIAS, ref, link.projectId(), linked, alias, "alias", alias);
        }
        return linked;
    }

    @Transactional
    public VersionView removeLinkedAlias(String registry, String collection, String version, String alias) {
        return removeLinkedLabel(registry, collection, version, Label.ALIAS, alias);
    }

    @Transactional
    public VersionView addLinkedTag(String registry, String collection, String version, String tag) {
        Names.requireEntity(registry, "path", "registry");
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        ArtifactNames.name(tag, "path", "tag");
        RegistryRef ref = access.registry(registry, Role.MEMBER);
        LinkRef link = findLinked(ref, collection, selector);
        boolean added = jdbc(c -> {
            try (PreparedStatement insert = c.prepareStatement(
                    "insert into registry_link_tags (link_id, tag) values (?, ?) on conflict do nothing")) {
                insert.setLong(1, link.linkId());
                insert.setString(2, tag);
                return insert.executeUpdate() == 1;
            }
        });
        VersionView linked = linkedView(ref, collection, link.linkId());
        if (added) {
            recordLinked(EventType.ADD_ARTIFACT_TAG, ref, link.projectId(), linked, linked.version(), "tag", tag);
        }
        return linked;
    }

    @Transactional
    public VersionView removeLinkedTag(String registry, String collection, String version, String tag) {
        return removeLinkedLabel(registry, collection, version, Label.TAG, tag);
    }

    private VersionView removeLinkedLabel(String registry, String collection, String version, Label label,
            String value) {
        Names.requireEntity(registry, "path", "registry");
        ArtifactNames.name(collection, "path", "collection");
        Selector selector = Selector.parse(version, "path", "version");
        label.check(value);
        RegistryRef ref = access.registry(registry, Role.MEMBER);
        LinkRef link = findLinked(ref, collection, selector);
        if (deleteLabel(label.linkTable, "link_id", label.column, link.linkId(), value) == 0) {
            throw ApiException.notFound("Version " + selector + " of " + registry + "/" + collection + " has no "
                    + label.column + " " + value);
        }
        return linkedView(ref, collection, link.linkId());
    }

    private VersionView linkedView(RegistryRef registry, String collection, long linkId) {
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement(LINKED_QUERY + " and l.id = ?")) {
                query.setLong(1, registry.registryId());
                query.setString(2, collection);
                query.setLong(3, linkId);
                return linkedViews(c, query, registry, collection, true).get(0);
            }
        });
    }

    /** An event about a linked version, scoped to the registry and the project of the version. */
    private void recordLinked(EventType type, RegistryRef registry, long projectId, VersionView linked, String name,
            String field, String value) {
        ObjectNode payload = payload(linked, name);
        payload.put(field, value);
        payload.put("registry_name", registry.registry());
        payload.put("artifact_version_string", registry.registry() + "/" + linked.collection() + ":" + name);
        Caller caller = access.caller();
        events.record(type, new Scope(projectId, registry.registryId()), caller.userId(), caller.username(), payload);
    }

    // ---------------------------------------------------------------- helpers

    /** The payload variables of spec 6.2 for an event about {@code version}, named {@code alias} in the string form. */
    private static ObjectNode payload(VersionView version, String alias) {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("entity_name", version.entity());
        payload.put("project_name", version.project());
        payload.put("artifact_collection_name", version.collection());
        payload.put("artifact_type", version.type());
        payload.put("version_index", version.index());
        payload.put("version", version.version());
        payload.put("artifact_version", version.reference());
        payload.put("artifact_version_string",
                version.entity() + "/" + version.project() + "/" + version.collection() + ":" + alias);
        payload.set("artifact_metadata", version.metadata());
        return payload;
    }

    private static Page page(List<VersionView> versions, int size, int skip) {
        if (versions.size() > size) {
            return new Page(new ArrayList<>(versions.subList(0, size)), skip + size);
        }
        return new Page(versions, null);
    }

    private static void setString(PreparedStatement statement, int index, String value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.VARCHAR);
        } else {
            statement.setString(index, value);
        }
    }

    private <T> T jdbc(ReturningWork<T> work) {
        return em.unwrap(Session.class).doReturningWork(work);
    }
}

package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import org.jboss.resteasy.reactive.multipart.FileUpload;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactNames.Selector;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.CanonicalJson;
import dev.fulcrum.platform.json.JsonInput;
import dev.fulcrum.platform.json.StorableText;
import dev.fulcrum.platform.json.StoredJson;

/**
 * Creating, changing and deleting versions of artifact collections. File contents go to the {@link BlobStore} before
 * the database transaction starts; the transaction then creates the project if needed and locks the collection row, so
 * concurrent writers of one collection get distinct version indexes and a consistent {@code latest}. Nothing is created
 * before every check of the request passed. Reads are {@link ArtifactVersions}'.
 */
@ApplicationScoped
public class VersionWrites {

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
    BlobChecksums checksums;

    @Inject
    FulcrumConfig config;

    @Inject
    ArtifactCollections collections;

    @Inject
    ArtifactVersions versions;

    public record Created(VersionView version, boolean isNew) {
    }

    /** A stored file as uploaded. */
    record Upload(String path, String digest, long size, String contentType) {
    }

    /**
     * Stores the files in the blob store, then creates the version in one transaction. Identical content (same paths,
     * file digests and metadata) returns the existing version.
     */
    public Created createVersion(String entity, String project, String collection, List<FileUpload> files,
            String metadataText, String description, String type) {
        if (type != null) {
            ArtifactNames.type(type, "body", "type");
        }
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
        String clash = FileTree.clash(paths);
        if (clash != null) {
            throw ApiException.invalid(Violation.of(clash, "value_error", "body", "file"));
        }
        List<String> types = new ArrayList<>(files.size());
        for (int i = 0; i < files.size(); i++) {
            types.add(FileTypes.uploaded(files.get(i).contentType(), "body", "file", i));
        }
        Access.EntityRef owner = access.entity(entity, Role.MEMBER);
        if (type == null && !collections.exists(owner.entityId(), project, collection)) {
            throw ApiException.notFound("Collection " + collection + " not found in " + entity + "/" + project);
        }
        long max = config.artifacts().maxFileBytes();
        for (FileUpload file : files) {
            if (file.size() > max) {
                throw ApiException.payloadTooLarge("The file " + file.fileName() + " is larger than " + max + " bytes");
            }
        }
        List<Upload> uploads = new ArrayList<>(files.size());
        for (int i = 0; i < files.size(); i++) {
            FileUpload file = files.get(i);
            try (InputStream in = Files.newInputStream(file.uploadedFile())) {
                BlobStore.Blob blob = checksums.put(in, max).blob();
                uploads.add(new Upload(file.fileName(), blob.digest(), blob.size(), types.get(i)));
            } catch (BlobStore.TooLarge e) {
                throw ApiException.payloadTooLarge("The file " + file.fileName() + " is larger than " + max + " bytes");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        uploads.sort(Comparator.comparing(Upload::path));
        return storeVersion(entity, project, collection, type, description, metadata, uploads);
    }

    /** A file whose content is already in the blob store (uploaded through another door, such as the W&B SDK's). */
    public record StoredFile(String path, String digest, long size) {
    }

    /**
     * Creates a version of files already in the blob store, as {@link #createVersion} does for uploaded parts: the same
     * checks of names and paths, the same events, and identical content answers the existing version.
     */
    public Created createVersionFromBlobs(String entity, String project, String collection, String type,
            String description, ObjectNode metadata, List<StoredFile> files) {
        ArtifactNames.name(collection, "body", "name");
        ArtifactNames.type(type, "body", "type");
        ArtifactNames.description(description, "body", "description");
        if (!JsonInput.isFinite(metadata)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "metadata"));
        }
        if (files.isEmpty()) {
            throw ApiException.invalid(Violation.of("At least one file is needed", "missing", "body", "files"));
        }
        Set<String> paths = new HashSet<>();
        List<Upload> uploads = new ArrayList<>(files.size());
        for (int i = 0; i < files.size(); i++) {
            StoredFile file = files.get(i);
            if (!paths.add(ArtifactNames.path(file.path(), "body", "files", i))) {
                throw ApiException.invalid(
                        Violation.of("The file " + file.path() + " is given twice", "value_error", "body", "files", i));
            }
            uploads.add(new Upload(file.path(), file.digest(), file.size(), null));
        }
        String clash = FileTree.clash(paths);
        if (clash != null) {
            throw ApiException.invalid(Violation.of(clash, "value_error", "body", "files"));
        }
        uploads.sort(Comparator.comparing(Upload::path));
        return storeVersion(entity, project, collection, type, description, metadata, uploads);
    }

    /**
     * Changes a version's description and metadata (the W&B SDK's {@code artifact.save()}); needs the member role. The
     * version's digest stays the one of its content when it was created.
     */
    @Transactional
    public VersionView describe(long versionId, String description, ObjectNode metadata) {
        VersionView current = versions.byId(versionId, false);
        ArtifactNames.description(description, "body", "description");
        if (!JsonInput.isFinite(metadata)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "metadata"));
        }
        ProjectRef ref = access.project(current.entity(), current.project(), Role.MEMBER);
        ArtifactVersion stored = ArtifactVersion.findById(versionId);
        stored.description = description;
        stored.metadata = storedJson.write(metadata);
        em.flush();
        em.refresh(stored);
        return versions.view(ref, versionId, false);
    }

    private ObjectNode parseMetadata(String text) {
        if (text == null || text.isBlank()) {
            return JsonNodeFactory.instance.objectNode();
        }
        try {
            JsonNode node = StorableText.json(json, text, "body", "metadata");
            if (node instanceof ObjectNode object) {
                if (!JsonInput.isFinite(object)) {
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

    /** The project (created on this first write), the collection (created if a type is given) and the version. */
    @Transactional
    Created storeVersion(String entity, String project, String collection, String type, String description,
            ObjectNode metadata, List<Upload> uploads) {
        ProjectRef ref = access.writableProject(entity, project);
        ArtifactCollection target = type == null ? collections.lock(ref.projectId(), collection)
                : collections.lockOrCreate(ref.projectId(), collection, type);
        if (target == null) {
            throw ArtifactCollections.notFound(ref, collection);
        }
        String digest = versionDigest(uploads, metadata);
        Long existing = em.createQuery("""
                select v.id from ArtifactVersion v where v.collectionId = :collection and v.digest = :digest
                order by v.versionIndex""", Long.class).setParameter("collection", target.id)
                .setParameter("digest", digest).setMaxResults(1).getResultStream().findFirst().orElse(null);
        if (existing != null) {
            return new Created(versions.view(ref, existing, true), false);
        }
        Integer newest = em
                .createQuery("select max(v.versionIndex) from ArtifactVersion v where v.collectionId = :collection",
                        Integer.class)
                .setParameter("collection", target.id).getSingleResult();
        ArtifactVersion stored = new ArtifactVersion();
        stored.collectionId = target.id;
        stored.versionIndex = newest == null ? 0 : newest + 1;
        stored.digest = digest;
        stored.description = description;
        stored.metadata = storedJson.write(metadata);
        stored.size = uploads.stream().mapToLong(Upload::size).sum();
        stored.fileCount = uploads.size();
        stored.createdBy = access.caller().userId();
        stored.persist();
        em.refresh(stored); // the metadata as jsonb answers it, as every later read will
        for (Upload upload : uploads) {
            ArtifactFile file = new ArtifactFile();
            file.versionId = stored.id;
            file.path = upload.path();
            file.digest = upload.digest();
            file.size = upload.size();
            file.contentType = upload.contentType();
            file.persist();
        }
        VersionView version = versions.view(ref, stored.id, false);
        Caller caller = access.caller();
        events.record(EventType.CREATE_ARTIFACT, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                ArtifactViews.payload(version, version.version()));
        ArtifactStatements.setAlias(em, target.id, ArtifactViews.LATEST, stored.id);
        ObjectNode aliasPayload = ArtifactViews.payload(version, ArtifactViews.LATEST);
        aliasPayload.put("alias", ArtifactViews.LATEST);
        events.record(EventType.ADD_ARTIFACT_ALIAS, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                aliasPayload);
        return new Created(versions.view(ref, stored.id, true), true);
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

    /**
     * Deletes one version with its files' records, aliases and tags (file contents stay in the content-addressed
     * store). When it held {@code latest}, the highest remaining version gets it.
     */
    @Transactional
    public void deleteVersion(String entity, String project, String collection, String version) {
        Selector selector = Selector.parse(version, "path", "version");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        ArtifactCollection locked = collections.lock(ref.projectId(), collection);
        if (locked == null) {
            throw ArtifactCollections.notFound(ref, collection);
        }
        ArtifactVersion.delete("id", versions.find(ref, collection, selector));
        ArtifactStatements.restoreLatest(em, locked.id);
    }

    /**
     * Deletes a version by its id (member role; 404 when the caller may not read it), as W&B's {@code deleteArtifact}
     * does: a version that has aliases ({@code latest} among them) is refused (409) unless {@code withAliases}, then
     * deleted with them. Checked with the collection locked, so an alias given meanwhile is never deleted unasked. When
     * it held {@code latest}, the highest remaining version gets it. Answers the version as it was.
     */
    @Transactional
    public VersionView deleteVersion(long versionId, boolean withAliases) {
        VersionView version = versions.byId(versionId, false);
        ProjectRef ref = access.project(version.entity(), version.project(), Role.MEMBER);
        ArtifactCollection locked = collections.lock(ref.projectId(), version.collection());
        List<String> aliases = em.createQuery("""
                select a.alias from ArtifactAlias a where a.versionId = :version order by a.alias""", String.class)
                .setParameter("version", versionId).getResultList();
        boolean exists = em.createQuery("select count(v) from ArtifactVersion v where v.id = :version", Long.class)
                .setParameter("version", versionId).getSingleResult() > 0;
        if (locked == null || !exists) {
            throw ApiException.notFound("No artifact version " + versionId);
        }
        if (!aliases.isEmpty() && !withAliases) {
            throw ApiException.conflict(version.reference() + " has the aliases " + String.join(", ", aliases)
                    + ": remove them first, or delete it with its aliases (delete_aliases=True)");
        }
        ArtifactVersion.delete("id", versionId);
        ArtifactStatements.restoreLatest(em, locked.id);
        return version;
    }

    /**
     * Deletes a version with no caller, for a retention rule of the feature that made it (Tinker's expired saved
     * weights): its aliases go with it, and when it held {@code latest} the highest remaining version gets it. A
     * version already gone is no error.
     */
    @Transactional
    public void deleteExpired(long versionId) {
        ArtifactVersion version = ArtifactVersion.findById(versionId);
        if (version == null) {
            return;
        }
        ArtifactCollection locked = ArtifactCollection.<ArtifactCollection> find("id", version.collectionId)
                .withLock(LockModeType.PESSIMISTIC_WRITE).firstResult();
        ArtifactVersion.delete("id", versionId);
        ArtifactStatements.restoreLatest(em, locked.id);
    }
}

package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.ProjectVersion;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;

/**
 * Drafts: artifact versions being assembled before their commit. A draft (a row of {@code artifact_drafts}) names its
 * project, collection, type, description, metadata, the aliases and tags its version will get, and the run logging it;
 * its files are announced with their MD5 (base64) and then uploaded, each streamed into the blob store and checked
 * against its MD5 (big ones as {@link MultipartUploads}); a manifest (any client's document describing the files) may
 * be kept beside them. The commit makes a version of the collection from uploaded files, with the draft's aliases and
 * tags, through the artifacts services, so the same events fire. The draft stays after its commit (its manifest is the
 * one its client downloads); one never committed is removed by {@link ArtifactDraftSweeper}. The W&B door's
 * {@code createArtifact}, {@code createArtifactFiles}, signed file uploads and {@code commitArtifact} are these calls.
 */
@ApplicationScoped
public class ArtifactDrafts {

    @Inject
    Access access;

    @Inject
    DraftStatements statements;

    @Inject
    BlobStore blobs;

    @Inject
    BlobChecksums checksums;

    @Inject
    FulcrumConfig config;

    @Inject
    StoredJson storedJson;

    @Inject
    ArtifactVersions versions;

    @Inject
    VersionWrites versionWrites;

    @Inject
    ArtifactLabels labels;

    /**
     * A draft as stored: {@code metadata} a JSON object's text, {@code manifestDigest} the blob of its manifest (null
     * until uploaded), {@code versionId} its version once committed, {@code runName} the run (of its project) logging
     * it, or null.
     */
    public record Draft(long id, long projectId, String entity, String project, String collection, String type,
            String description, String metadata, List<String> aliases, List<String> tags, String manifestDigest,
            Long versionId, OffsetDateTime createdAt, String runName) {
    }

    /** A file announced for a draft: its MD5 (base64) and, once uploaded, its blob and size. */
    public record DraftFile(String name, String md5, String blob, Long size) {
    }

    /** A new draft in a project the caller may write (a member's first write creates the project). */
    @Transactional
    public Draft create(String entity, String project, String collection, String type, String description,
            ObjectNode metadata, List<String> aliases, List<String> tags, String runName) {
        ProjectRef ref = access.writableProject(entity, project);
        long id = statements.insertDraft(ref.projectId(), collection, type, description, storedJson.write(metadata),
                aliases, tags, access.caller().userId(), runName == null || runName.isEmpty() ? null : runName);
        return draft(id);
    }

    /** The draft (no access check: the caller checks it, or a signed URL stands for it); 404 when there is none. */
    @Transactional
    public Draft draft(long id) {
        return statements.draft(id).orElseThrow(() -> ApiException.notFound("No artifact draft " + id));
    }

    /** The draft, in a project the caller may write (member role). */
    @Transactional
    public Draft writable(long id) {
        Draft draft = draft(id);
        access.project(draft.entity(), draft.project(), Role.MEMBER);
        return draft;
    }

    /** Announces a file of a draft (a file announced again takes the new MD5 and must be uploaded again). */
    @Transactional
    public void announce(long draftId, String name, String md5) {
        statements.announce(draftId, name, md5);
    }

    /** The draft's announced files. */
    @Transactional
    public List<DraftFile> files(long draftId) {
        return statements.files(draftId);
    }

    /** The announced file of the draft; 404 when it was not announced. */
    @Transactional
    public DraftFile file(long draftId, String name) {
        return statements.file(draftId, name)
                .orElseThrow(() -> ApiException.notFound("No file " + name + " announced for this artifact"));
    }

    /**
     * Streams an announced file of a draft not committed into the blob store; its MD5 must be the announced one (else
     * 422 and the upload is not recorded). The caller checked the right to write (a signed URL stands for it).
     */
    public void uploadFile(long draftId, String name, InputStream body) {
        uncommitted(draft(draftId));
        DraftFile announced = file(draftId, name);
        BlobChecksums.Checked stored = store(body);
        if (!stored.md5().equals(announced.md5())) {
            throw ApiException.invalid(
                    Violation.of("The content's MD5 is " + stored.md5() + ", not the announced " + announced.md5(),
                            "value_error", "body"));
        }
        recordFile(draftId, name, stored.blob());
    }

    /** Records a file of the draft as uploaded into the blob (a single upload's or a joined multipart upload's). */
    @Transactional
    void recordFile(long draftId, String name, BlobStore.Blob blob) {
        statements.setFileBlob(draftId, name, blob.digest(), blob.size());
    }

    /** Streams the manifest of a draft not committed into the blob store (the caller checked the right to write). */
    public void uploadManifest(long draftId, InputStream body) {
        uncommitted(draft(draftId));
        BlobChecksums.Checked stored = store(body);
        recordManifest(draftId, stored.blob().digest());
    }

    @Transactional
    void recordManifest(long draftId, String digest) {
        statements.setManifest(draftId, digest);
    }

    /** The bytes of the draft's manifest; 404 when it was not uploaded. */
    public InputStream openManifest(Draft draft) {
        if (draft.manifestDigest() == null) {
            throw ApiException.notFound("The artifact's manifest was not uploaded");
        }
        String digest = draft.manifestDigest();
        try {
            return blobs.open(digest, 0, blobs.size(digest).orElseThrow());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The newest draft with a manifest committed to the version, or null. */
    @Transactional
    public Draft manifestOf(long versionId) {
        return statements.manifestDraftOf(versionId).map(this::draft).orElse(null);
    }

    /**
     * Commits a draft the caller may write: {@code files} (uploaded files of the draft, by the paths they take) become
     * a version of the collection, then the draft's aliases (besides {@code latest}, which the store moves itself) and
     * tags are set. Answers the version.
     */
    public VersionView commit(long draftId, List<StoredFile> files) {
        Draft draft = writable(draftId);
        uncommitted(draft);
        VersionView version = versionWrites.createVersionFromBlobs(draft.entity(), draft.project(), draft.collection(),
                draft.type(), draft.description(), storedJson.readObject(draft.metadata()), files).version();
        ProjectVersion target = new ProjectVersion(draft.entity(), draft.project(), draft.collection(),
                version.version());
        for (String alias : draft.aliases()) {
            if (!alias.equals("latest")) {
                labels.add(target, Label.ALIAS, alias);
            }
        }
        for (String tag : draft.tags()) {
            labels.add(target, Label.TAG, tag);
        }
        markCommitted(draft.id(), version.id());
        return versions.byId(version.id(), false);
    }

    @Transactional
    void markCommitted(long draftId, long versionId) {
        statements.setVersion(draftId, versionId);
    }

    /** The MD5s (base64) of files' blobs, by digest (computed and kept for blobs stored before MD5s were kept). */
    public Map<String, String> md5s(List<FileView> files) {
        return checksums.md5s(files.stream().map(file -> new BlobStore.Blob(file.digest(), file.size())).toList());
    }

    /** 409 when the draft is committed. */
    static void uncommitted(Draft draft) {
        if (draft.versionId() != null) {
            throw ApiException.conflict("The artifact draft " + draft.id() + " is committed");
        }
    }

    private BlobChecksums.Checked store(InputStream body) {
        long max = config.artifacts().maxFileBytes();
        try {
            return checksums.put(body, max);
        } catch (BlobStore.TooLarge e) {
            throw ApiException.payloadTooLarge("The file is larger than " + max + " bytes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

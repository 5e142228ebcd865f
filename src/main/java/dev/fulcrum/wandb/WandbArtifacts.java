package dev.fulcrum.wandb;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.artifacts.ArtifactLabels;
import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.ProjectVersion;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.artifacts.VersionWrites;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Artifact versions logged by the W&B SDK, onto the artifacts store. The SDK's protocol has a pending state the store
 * does not: {@code createArtifact} makes a draft (a row of {@code wandb_artifact_drafts}), the SDK uploads its files
 * and its manifest to signed URLs of this server (into the blob store, each file's MD5 checked against the one the SDK
 * announced), and {@code commitArtifact} creates the store's version from the manifest's files, with the aliases and
 * tags the SDK asked for, through the artifacts services (so the same events fire). Downloads are signed URLs too: the
 * SDK fetches them without credentials, as it does a cloud bucket's.
 */
@ApplicationScoped
public class WandbArtifacts {

    static final String SIGNING = "wandb-artifact-url";
    static final long URL_SECONDS = 24 * 3600;

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    BlobStore blobs;

    @Inject
    BlobChecksums checksums;

    @Inject
    FulcrumConfig config;

    @Inject
    SecretCipher cipher;

    @Inject
    ArtifactVersions versions;

    @Inject
    VersionWrites versionWrites;

    @Inject
    ArtifactLabels labels;

    /** A draft as stored. */
    record Draft(long id, long projectId, String entity, String project, String collection, String type,
            String description, String metadata, List<String> aliases, List<String> tags, String manifestDigest,
            Long versionId, OffsetDateTime createdAt) {
    }

    /** A file announced for a draft: its MD5 (base64) and, once uploaded, its blob. */
    record DraftFile(String name, String md5, String blob, Long size) {
    }

    // ids ----------------------------------------------------------------------------------------------------------

    static String versionId(long id) {
        return WandbNodes.opaque("Artifact", Long.toString(id));
    }

    static String draftId(long id) {
        return WandbNodes.opaque("Artifact", "draft:" + id);
    }

    /** {@code [draft id, null]} or {@code [null, version id]}; an id that is neither is a 404. */
    static Long[] parseArtifactId(String id) {
        try {
            String text = new String(Base64.getDecoder().decode(id), StandardCharsets.UTF_8);
            if (text.startsWith("Artifact:draft:")) {
                return new Long[] { Long.parseLong(text.substring("Artifact:draft:".length())), null };
            }
            if (text.startsWith("Artifact:")) {
                return new Long[] { null, Long.parseLong(text.substring("Artifact:".length())) };
            }
        } catch (IllegalArgumentException e) {
            // answered below
        }
        throw ApiException.notFound("No artifact " + id);
    }

    // drafts -------------------------------------------------------------------------------------------------------

    /** A new draft in a project the caller may write (a member's first write creates the project). */
    @Transactional
    Draft create(String entity, String project, String collection, String type, String description, String metadata,
            List<String> aliases, List<String> tags) {
        ObjectNode parsed = metadata == null ? JsonNodeFactory.instance.objectNode()
                : SdkJson.object(metadata, "metadata");
        ProjectRef ref = access.writableProject(entity, project);
        long id = NativeSql.first(em, """
                insert into wandb_artifact_drafts
                    (project_id, collection, type, description, metadata, aliases, tags, created_by)
                values (?1, ?2, ?3, ?4, cast(?5 as jsonb), cast(?6 as text[]), cast(?7 as text[]), ?8) returning id""",
                row -> row.longValue(0), ref.projectId(), collection, type, NativeSql.typed(description, String.class),
                SdkJson.write(parsed), NativeSql.textArray(aliases), NativeSql.textArray(tags),
                NativeSql.typed(access.caller().userId(), Long.class)).orElseThrow();
        return draft(id);
    }

    @Transactional
    Draft draft(long id) {
        return NativeSql
                .first(em,
                        """
                                select d.id, d.project_id, e.name, p.name, d.collection, d.type, d.description, d.metadata::text,
                                       array_to_json(d.aliases)::text, array_to_json(d.tags)::text, d.manifest_digest, d.version_id,
                                       d.created_at
                                from wandb_artifact_drafts d join project_names p on p.project_id = d.project_id join entity_names e on e.entity_id = p.entity_id
                                where d.id = ?1""",
                        row -> new Draft(row.longValue(0), row.longValue(1), row.string(2), row.string(3),
                                row.string(4), row.string(5), row.string(6), row.string(7), strings(row.string(8)),
                                strings(row.string(9)), row.string(10), row.longValue(11), row.time(12)),
                        id)
                .orElseThrow(() -> ApiException.notFound("No artifact " + draftId(id)));
    }

    /** A draft the caller may write, not yet committed. */
    @Transactional
    Draft writableDraft(String artifactId) {
        Long[] parsed = parseArtifactId(artifactId);
        if (parsed[0] == null) {
            throw ApiException.conflict("Artifact " + artifactId + " is committed");
        }
        Draft draft = draft(parsed[0]);
        access.project(draft.entity(), draft.project(), dev.fulcrum.accounts.Role.MEMBER);
        if (draft.versionId() != null) {
            throw ApiException.conflict("Artifact " + artifactId + " is committed");
        }
        return draft;
    }

    /** Announces files of a draft (a file announced again takes the new MD5 and must be uploaded again). */
    @Transactional
    void announce(Draft draft, String name, String md5) {
        NativeSql.update(em, """
                insert into wandb_artifact_draft_files (draft_id, name, md5) values (?1, ?2, ?3)
                on conflict (draft_id, name) do update set md5 = excluded.md5, blob = null, size = null""", draft.id(),
                name, md5);
    }

    /**
     * Stores an uploaded file of a draft after checking the signature of its URL; its MD5 must be the announced one
     * (else 422 and the upload is not recorded).
     */
    void uploadFile(long draftId, String name, long expires, String signature, InputStream body) {
        check("PUT file " + draftId + " " + name, expires, signature);
        Draft draft = draft(draftId);
        if (draft.versionId() != null) {
            throw ApiException.conflict("Artifact " + draftId(draftId) + " is committed");
        }
        DraftFile announced = NativeSql.first(em,
                "select name, md5, blob, size from wandb_artifact_draft_files where draft_id = ?1 and name = ?2",
                row -> new DraftFile(row.string(0), row.string(1), row.string(2), row.longValue(3)), draftId, name)
                .orElseThrow(() -> ApiException.notFound("No file " + name + " announced for this artifact"));
        Stored stored = store(body);
        if (!stored.md5().equals(announced.md5())) {
            throw ApiException.invalid(
                    Violation.of("The content's MD5 is " + stored.md5() + ", not the announced " + announced.md5(),
                            "value_error", "body"));
        }
        recordUpload(draftId, name, stored);
    }

    @Transactional
    void recordUpload(long draftId, String name, Stored stored) {
        NativeSql.update(em,
                "update wandb_artifact_draft_files set blob = ?1, size = ?2 where draft_id = ?3 and name = ?4",
                stored.blob().digest(), stored.blob().size(), draftId, name);
    }

    /** Stores a draft's manifest after checking the signature of its URL. */
    void uploadManifest(long draftId, long expires, String signature, InputStream body) {
        check("PUT manifest " + draftId, expires, signature);
        Draft draft = draft(draftId);
        if (draft.versionId() != null) {
            throw ApiException.conflict("Artifact " + draftId(draftId) + " is committed");
        }
        Stored stored = store(body);
        recordManifest(draftId, stored.blob().digest());
    }

    @Transactional
    void recordManifest(long draftId, String digest) {
        NativeSql.update(em, "update wandb_artifact_drafts set manifest_digest = ?1 where id = ?2", digest, draftId);
    }

    record Stored(BlobStore.Blob blob, String md5) {
    }

    private Stored store(InputStream body) {
        long max = config.artifacts().maxFileBytes();
        try {
            BlobChecksums.Checked checked = checksums.put(body, max);
            return new Stored(checked.blob(), checked.md5());
        } catch (BlobStore.TooLarge e) {
            throw ApiException.payloadTooLarge("The file is larger than " + max + " bytes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The draft's version: the manifest's files (each uploaded with the MD5 the manifest gives) become a version of the
     * collection, then the asked aliases (besides {@code latest}, which the store moves itself) and tags are set.
     */
    VersionView commit(String artifactId) {
        Draft draft = writableDraft(artifactId);
        if (draft.manifestDigest() == null) {
            throw ApiException
                    .invalid(Violation.of("The artifact's manifest was not uploaded", "missing", "body", "artifactID"));
        }
        JsonNode manifest;
        try (InputStream in = blobs.open(draft.manifestDigest(), 0, blobs.size(draft.manifestDigest()).orElseThrow())) {
            manifest = SdkJson.MAPPER.readTree(in);
        } catch (IOException e) {
            throw ApiException.invalid(Violation.of("The manifest is not JSON", "json_invalid", "body", "manifest"));
        }
        Map<String, DraftFile> uploaded = new java.util.HashMap<>();
        NativeSql
                .list(em, "select name, md5, blob, size from wandb_artifact_draft_files where draft_id = ?1",
                        row -> new DraftFile(row.string(0), row.string(1), row.string(2), row.longValue(3)), draft.id())
                .forEach(file -> uploaded.put(file.name(), file));
        List<StoredFile> files = new ArrayList<>();
        manifest.path("contents").fields().forEachRemaining(entry -> {
            JsonNode spec = entry.getValue();
            if (spec.hasNonNull("ref")) {
                throw ApiException.invalid(Violation.of("Reference entries are not stored (" + entry.getKey() + ")",
                        "value_error", "body", "manifest", "contents", entry.getKey()));
            }
            DraftFile file = uploaded.get(entry.getKey());
            if (file == null || file.blob() == null || !file.md5().equals(spec.path("digest").asText())) {
                throw ApiException.invalid(Violation.of("The file " + entry.getKey() + " was not uploaded", "missing",
                        "body", "manifest", "contents", entry.getKey()));
            }
            files.add(new StoredFile(entry.getKey(), file.blob(), file.size()));
        });
        VersionView version = versionWrites.createVersionFromBlobs(draft.entity(), draft.project(), draft.collection(),
                draft.type(), draft.description(), SdkJson.object(draft.metadata(), "metadata"), files).version();
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
        NativeSql.update(em, "update wandb_artifact_drafts set version_id = ?1 where id = ?2", versionId, draftId);
    }

    /** The SDK's manifest of a version it logged (the newest draft committed to it), or null. */
    @Transactional
    Draft manifestOf(long versionId) {
        return NativeSql
                .first(em,
                        "select id from wandb_artifact_drafts where version_id = ?1 and manifest_digest is not null"
                                + " order by id desc limit 1",
                        row -> row.longValue(0), versionId)
                .map(this::draft).orElse(null);
    }

    /** A file of a version, for a signed download (the signature stands for the caller's read access). */
    @Transactional
    FileView signedFile(long versionId, String name) {
        return versions.signedFiles(versionId, name).stream().findFirst()
                .orElseThrow(() -> ApiException.notFound("No file " + name + " in this artifact version"));
    }

    /**
     * The SDK's manifest of a version it did not log (REST uploads, training checkpoints), made from the version's
     * files and their blobs' MD5s; the signature stands for the caller's read access.
     */
    @Transactional
    ObjectNode versionManifest(long versionId) {
        List<FileView> files = versions.signedFiles(versionId, null);
        if (files.isEmpty()) {
            throw ApiException.notFound("No artifact version " + versionId);
        }
        Map<String, String> md5s = checksums
                .md5s(files.stream().map(file -> new BlobStore.Blob(file.digest(), file.size())).toList());
        ObjectNode manifest = JsonNodeFactory.instance.objectNode();
        manifest.put("version", 1);
        manifest.put("storagePolicy", "wandb-storage-policy-v1");
        manifest.putObject("storagePolicyConfig").put("storageLayout", "V2");
        ObjectNode contents = manifest.putObject("contents");
        for (FileView file : files) {
            contents.putObject(file.path()).put("digest", md5s.get(file.digest())).put("size", file.size());
        }
        return manifest;
    }

    // signed URLs --------------------------------------------------------------------------------------------------

    String fileUploadUrl(String base, long draftId, String name) {
        long expires = Instant.now().getEpochSecond() + URL_SECONDS;
        return base + "wandb/artifact-drafts/" + draftId + "/files?name=" + encode(name) + "&expires=" + expires
                + "&signature=" + cipher.sign(SIGNING, "PUT file " + draftId + " " + name + " " + expires);
    }

    String manifestUploadUrl(String base, long draftId) {
        long expires = Instant.now().getEpochSecond() + URL_SECONDS;
        return base + "wandb/artifact-drafts/" + draftId + "/manifest?expires=" + expires + "&signature="
                + cipher.sign(SIGNING, "PUT manifest " + draftId + " " + expires);
    }

    String manifestDownloadUrl(String base, long draftId) {
        long expires = Instant.now().getEpochSecond() + URL_SECONDS;
        return base + "wandb/artifact-drafts/" + draftId + "/manifest?expires=" + expires + "&signature="
                + cipher.sign(SIGNING, "GET manifest " + draftId + " " + expires);
    }

    String versionManifestUrl(String base, long versionId) {
        long expires = Instant.now().getEpochSecond() + URL_SECONDS;
        return base + "wandb/artifact-versions/" + versionId + "/manifest?expires=" + expires + "&signature="
                + cipher.sign(SIGNING, "GET version manifest " + versionId + " " + expires);
    }

    String fileDownloadUrl(String base, long versionId, String name) {
        long expires = Instant.now().getEpochSecond() + URL_SECONDS;
        return base + "wandb/artifact-versions/" + versionId + "/files?name=" + encode(name) + "&expires=" + expires
                + "&signature=" + cipher.sign(SIGNING, "GET file " + versionId + " " + name + " " + expires);
    }

    /** 403 unless the signature is this server's for the message and the URL has not expired. */
    void check(String message, long expires, String signature) {
        if (signature == null || expires < Instant.now().getEpochSecond()
                || !MessageDigest.isEqual(
                        cipher.sign(SIGNING, message + " " + expires).getBytes(StandardCharsets.UTF_8),
                        signature.getBytes(StandardCharsets.UTF_8))) {
            throw ApiException.forbidden("The URL's signature is not valid or it expired");
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static List<String> strings(String jsonArray) {
        List<String> values = new ArrayList<>();
        if (jsonArray != null) {
            SdkJson.read(jsonArray).forEach(value -> values.add(value.asText()));
        }
        return values;
    }
}

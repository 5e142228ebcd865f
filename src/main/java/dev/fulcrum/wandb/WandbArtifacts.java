package dev.fulcrum.wandb;

import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactDrafts;
import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactDrafts.DraftFile;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Artifact versions logged by the W&B SDK, translated into the artifacts store's drafts ({@link ArtifactDrafts}):
 * {@code createArtifact} makes a draft, the SDK uploads its files and its manifest to signed URLs of this server (each
 * PUT is an upload of the draft's file or manifest, its MD5 checked by the store against the one the SDK announced),
 * and {@code commitArtifact} reads the SDK's manifest and commits the draft with the files it lists, through the
 * artifacts services (so the same events fire). Downloads are signed URLs too: the SDK fetches them without
 * credentials, as it does a cloud bucket's. This class signs and checks the URLs and holds no table and no blob.
 */
@ApplicationScoped
public class WandbArtifacts {

    static final String SIGNING = "wandb-artifact-url";
    static final long URL_SECONDS = 24 * 3600;

    @Inject
    Access access;

    @Inject
    SecretCipher cipher;

    @Inject
    ArtifactVersions versions;

    @Inject
    ArtifactDrafts drafts;

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

    /** {@code createArtifact}: a new draft in a project the caller may write, logged by {@code runName} (or none). */
    Draft create(String entity, String project, String collection, String type, String description, String metadata,
            List<String> aliases, List<String> tags, String runName) {
        ObjectNode parsed = metadata == null ? JsonNodeFactory.instance.objectNode()
                : SdkJson.object(metadata, "metadata");
        return drafts.create(entity, project, collection, type, description, parsed, aliases, tags, runName);
    }

    /** The draft of an id, whoever may read it; 404 when there is none. */
    Draft draft(long id) {
        try {
            return drafts.draft(id);
        } catch (ApiException e) {
            throw e.kind() == ApiException.Kind.NOT_FOUND ? ApiException.notFound("No artifact " + draftId(id)) : e;
        }
    }

    /** A draft the caller may write, not yet committed. */
    Draft writableDraft(String artifactId) {
        Long[] parsed = parseArtifactId(artifactId);
        if (parsed[0] == null) {
            throw ApiException.conflict("Artifact " + artifactId + " is committed");
        }
        Draft draft = draft(parsed[0]);
        access.project(draft.entity(), draft.project(), Role.MEMBER);
        if (draft.versionId() != null) {
            throw ApiException.conflict("Artifact " + artifactId + " is committed");
        }
        return draft;
    }

    /** Announces a file of a draft (a file announced again takes the new MD5 and must be uploaded again). */
    void announce(Draft draft, String name, String md5) {
        drafts.announce(draft.id(), name, md5);
    }

    /**
     * A file's PUT to its signed URL: after checking the signature, the file is stored; its MD5 must be the announced
     * one (else 422 and the upload is not recorded).
     */
    void uploadFile(long draftId, String name, long expires, String signature, InputStream body) {
        check("PUT file " + draftId + " " + name, expires, signature);
        uncommitted(draftId);
        drafts.uploadFile(draftId, name, body);
    }

    /** The manifest's PUT to its signed URL: after checking the signature, the draft's manifest is stored. */
    void uploadManifest(long draftId, long expires, String signature, InputStream body) {
        check("PUT manifest " + draftId, expires, signature);
        uncommitted(draftId);
        drafts.uploadManifest(draftId, body);
    }

    private void uncommitted(long draftId) {
        if (draft(draftId).versionId() != null) {
            throw ApiException.conflict("Artifact " + draftId(draftId) + " is committed");
        }
    }

    /**
     * {@code commitArtifact}: the manifest's files (each uploaded with the MD5 the manifest gives) become the draft's
     * version, with its aliases and tags.
     */
    VersionView commit(String artifactId) {
        Draft draft = writableDraft(artifactId);
        if (draft.manifestDigest() == null) {
            throw ApiException
                    .invalid(Violation.of("The artifact's manifest was not uploaded", "missing", "body", "artifactID"));
        }
        JsonNode manifest;
        try (InputStream in = drafts.openManifest(draft)) {
            manifest = SdkJson.MAPPER.readTree(in);
        } catch (IOException e) {
            throw ApiException.invalid(Violation.of("The manifest is not JSON", "json_invalid", "body", "manifest"));
        }
        Map<String, DraftFile> uploaded = new java.util.HashMap<>();
        drafts.files(draft.id()).forEach(file -> uploaded.put(file.name(), file));
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
        return drafts.commit(draft.id(), files);
    }

    /** The SDK's manifest of a version it logged (the newest draft committed to it), or null. */
    Draft manifestOf(long versionId) {
        return drafts.manifestOf(versionId);
    }

    /** The bytes of a draft's manifest (the signature of the URL checked). */
    InputStream openManifest(long draftId) {
        return drafts.openManifest(draft(draftId));
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
        Map<String, String> md5s = drafts.md5s(files);
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
        if (!cipher.signedUntil(SIGNING, message, expires, signature)) {
            throw ApiException.forbidden("The URL's signature is not valid or it expired");
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

}

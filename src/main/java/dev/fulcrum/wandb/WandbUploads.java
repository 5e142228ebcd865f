package dev.fulcrum.wandb;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.artifacts.BlobCollector;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbArtifacts.Draft;

/**
 * Multipart uploads of artifact files, as the W&B SDK makes them for files of 2 GiB and more:
 * {@code createArtifactFiles} with {@code uploadPartsInput} starts an upload in the blob store (a row of
 * {@code wandb_artifact_uploads}) and hands out a signed URL per part; each part is streamed to the store on its own
 * and its MD5 kept (the ETag the SDK sends back); {@code completeMultipartUploadArtifact} joins the parts into the
 * file's blob, whose MD5 must be the one announced, and records the file as uploaded, as a single PUT does. Uploads
 * never completed are aborted by {@link WandbDraftSweeper}.
 */
@ApplicationScoped
@Startup // its meters are on the page from the start, at zero
public class WandbUploads {

    private static final Logger LOG = Logger.getLogger(WandbUploads.class);

    /** S3's most parts, which the SDK keeps to. */
    static final int MAX_PARTS = 10_000;

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
    WandbArtifacts artifacts;

    @Inject
    MeterRegistry registry;

    private Counter uploads;
    private Counter uploadedBytes;

    @PostConstruct
    void meters() {
        uploads = registry.counter("fulcrum.wandb.multipart.uploads");
        uploadedBytes = registry.counter("fulcrum.wandb.multipart.bytes");
    }

    @Inject
    BlobCollector collector;

    /** An upload as stored. */
    record Upload(long id, long draftId, String name, String storeId, int parts) {
    }

    /**
     * Starts a multipart upload of an announced file of the draft, of as many parts as {@code partsInput} numbers (1 to
     * n, each once); an upload of the same file started before is aborted. {@code at} is the input's path.
     */
    Upload start(Draft draft, String name, List<Map<String, Object>> partsInput, Object... at) {
        int count = partsInput.size();
        boolean[] seen = new boolean[count + 1];
        for (int i = 0; i < count; i++) {
            Map<String, Object> part = partsInput.get(i);
            Object number = part == null ? null : part.get("partNumber");
            long value = number instanceof Number n ? n.longValue() : 0;
            if (value < 1 || value > count || seen[(int) value]) {
                throw ApiException.invalid(Violation.of("The parts must be numbered 1 to " + count + ", each once",
                        "value_error", path(at, i, "partNumber")));
            }
            seen[(int) value] = true;
        }
        if (count > MAX_PARTS) {
            throw ApiException.invalid(Violation.of("At most " + MAX_PARTS + " parts", "value_error", path(at)));
        }
        for (Upload earlier : uploadsOf(draft.id(), name)) {
            end(earlier);
        }
        String storeId;
        try {
            storeId = blobs.startParts();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long id = insert(draft.id(), name, storeId, count);
        return new Upload(id, draft.id(), name, storeId, count);
    }

    @Transactional
    long insert(long draftId, String name, String storeId, int parts) {
        return NativeSql.first(em, """
                insert into wandb_artifact_uploads (draft_id, name, store_id, parts) values (?1, ?2, ?3, ?4)
                returning id""", row -> row.longValue(0), draftId, name, storeId, parts).orElseThrow();
    }

    @Transactional
    List<Upload> uploadsOf(long draftId, String name) {
        return NativeSql.list(em,
                "select id, draft_id, name, store_id, parts from wandb_artifact_uploads where draft_id = ?1 and name = ?2",
                WandbUploads::upload, draftId, name);
    }

    @Transactional
    Upload upload(long id) {
        return NativeSql
                .first(em, "select id, draft_id, name, store_id, parts from wandb_artifact_uploads where id = ?1",
                        WandbUploads::upload, id)
                .orElseThrow(() -> ApiException.notFound("No upload " + id));
    }

    private static Upload upload(NativeSql.Row row) {
        return new Upload(row.longValue(0), row.longValue(1), row.string(2), row.string(3), row.intValue(4));
    }

    /** The signed URL of a part. */
    String partUrl(String base, long upload, int part) {
        long expires = Instant.now().getEpochSecond() + WandbArtifacts.URL_SECONDS;
        return base + "wandb/artifact-uploads/" + upload + "/parts/" + part + "?expires=" + expires + "&signature="
                + cipher.sign(WandbArtifacts.SIGNING, "PUT part " + upload + " " + part + " " + expires);
    }

    /**
     * Streams a part into the store after checking the signature of its URL; answers its MD5 in hex. A part whose MD5
     * is not the {@code Content-MD5} sent is a 422 and counts as not uploaded.
     */
    String putPart(long uploadId, int part, long expires, String signature, String contentMd5, InputStream body,
            long length) {
        artifacts.check("PUT part " + uploadId + " " + part, expires, signature);
        Upload upload = upload(uploadId);
        if (part < 1 || part > upload.parts()) {
            throw ApiException.notFound("No part " + part + " in upload " + uploadId);
        }
        if (artifacts.draft(upload.draftId()).versionId() != null) {
            throw ApiException.conflict("Artifact " + WandbArtifacts.draftId(upload.draftId()) + " is committed");
        }
        if (length < 0) {
            throw ApiException.invalid(
                    Violation.of("A part must declare its Content-Length", "missing", "header", "Content-Length"));
        }
        if (length > config.artifacts().maxFileBytes()) {
            throw ApiException
                    .payloadTooLarge("The part is larger than " + config.artifacts().maxFileBytes() + " bytes");
        }
        forgetPart(uploadId, part);
        String md5;
        try {
            md5 = blobs.putPart(upload.storeId(), part, body, length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (contentMd5 != null && !contentMd5.isBlank()
                && !Base64.getEncoder().encodeToString(HexFormat.of().parseHex(md5)).equals(contentMd5.strip())) {
            throw ApiException.invalid(
                    Violation.of("The part's MD5 is not the Content-MD5 sent", "value_error", "header", "Content-MD5"));
        }
        recordPart(uploadId, part, md5);
        return md5;
    }

    @Transactional
    void forgetPart(long uploadId, int part) {
        NativeSql.update(em, "delete from wandb_artifact_upload_parts where upload_id = ?1 and part_number = ?2",
                uploadId, part);
    }

    @Transactional
    void recordPart(long uploadId, int part, String md5) {
        NativeSql.update(em, """
                insert into wandb_artifact_upload_parts (upload_id, part_number, md5) values (?1, ?2, ?3)
                on conflict (upload_id, part_number) do update set md5 = excluded.md5""", uploadId, part, md5);
    }

    /**
     * Joins an upload's parts into the file's blob: every part must be listed with the ETag its upload answered (422
     * otherwise, and the upload stays open for another try); then the upload ends, whether the join succeeds or not.
     * Answers the file's MD5 (base64).
     */
    @SuppressWarnings("unchecked")
    String complete(Map<String, Object> input) {
        Draft draft = artifacts.writableDraft((String) input.get("artifactID"));
        long uploadId;
        try {
            uploadId = Long.parseLong(String.valueOf(input.get("uploadID")));
        } catch (NumberFormatException e) {
            throw ApiException.notFound("No upload " + input.get("uploadID"));
        }
        Upload upload = upload(uploadId);
        if (upload.draftId() != draft.id()) {
            throw ApiException.notFound("No upload " + uploadId + " for this artifact");
        }
        if (!(draft.id() + "/" + upload.name()).equals(input.get("storagePath"))) {
            throw ApiException.invalid(Violation.of("Not the storage path of the upload's file", "value_error", "body",
                    "input", "storagePath"));
        }
        Map<Integer, String> stored = new HashMap<>();
        NativeSql.list(em, "select part_number, md5 from wandb_artifact_upload_parts where upload_id = ?1",
                row -> stored.put(row.intValue(0), row.string(1)), uploadId);
        List<Map<String, Object>> given = (List<Map<String, Object>>) input.get("completedParts");
        if (given.size() != upload.parts()) {
            throw ApiException.invalid(Violation.of("The upload has " + upload.parts() + " parts", "value_error",
                    "body", "input", "completedParts"));
        }
        for (int i = 0; i < given.size(); i++) {
            Map<String, Object> part = given.get(i);
            Object number = part == null ? null : part.get("partNumber");
            String etag = part == null || part.get("hexMD5") == null ? ""
                    : ((String) part.get("hexMD5")).replace("\"", "");
            if (!(number instanceof Number n) || !etag.equals(stored.get(n.intValue()))) {
                throw ApiException.invalid(Violation.of("Part " + number + " was not uploaded with this ETag",
                        "value_error", "body", "input", "completedParts", i));
            }
        }
        if (!claim(uploadId)) {
            throw ApiException.notFound("No upload " + uploadId);
        }
        BlobStore.Joined joined;
        try {
            joined = blobs.completeParts(upload.storeId(), upload.parts(), config.artifacts().maxFileBytes(),
                    blob -> collector.written(blob.digest()));
        } catch (BlobStore.TooLarge e) {
            abortQuietly(upload);
            throw ApiException
                    .payloadTooLarge("The file is larger than " + config.artifacts().maxFileBytes() + " bytes");
        } catch (IOException e) {
            abortQuietly(upload);
            throw new UncheckedIOException(e);
        }
        String announced = NativeSql
                .first(em, "select md5 from wandb_artifact_draft_files where draft_id = ?1 and name = ?2",
                        row -> row.string(0), draft.id(), upload.name())
                .orElse(null);
        checksums.record(joined.blob().digest(), joined.md5());
        if (!joined.md5().equals(announced)) {
            throw ApiException
                    .invalid(Violation.of("The file's MD5 is " + joined.md5() + ", not the announced " + announced,
                            "value_error", "body", "input", "uploadID"));
        }
        artifacts.recordUpload(draft.id(), upload.name(), new WandbArtifacts.Stored(joined.blob(), joined.md5()));
        uploads.increment();
        uploadedBytes.increment(joined.blob().size());
        return joined.md5();
    }

    /** Takes the upload away from any other completion or sweep; false when another took it first. */
    @Transactional
    boolean claim(long uploadId) {
        return NativeSql.update(em, "delete from wandb_artifact_uploads where id = ?1", uploadId) == 1;
    }

    /** Ends an upload: its row goes, then its parts in the store. */
    void end(Upload upload) {
        if (claim(upload.id())) {
            abortQuietly(upload);
        }
    }

    private void abortQuietly(Upload upload) {
        try {
            blobs.abortParts(upload.storeId());
        } catch (IOException | RuntimeException e) {
            LOG.warnf(e, "Could not abort upload %d in the blob store", upload.id());
        }
    }

    /** Aborts the uploads started before {@code before}, and those of drafts the sweeper removes; answers how many. */
    int sweep(OffsetDateTime before) {
        int total = 0;
        List<Upload> stale;
        do {
            stale = stale(before);
            for (Upload upload : stale) {
                abortQuietly(upload);
            }
            total += stale.size();
        } while (stale.size() == WandbDraftSweeper.BATCH);
        return total;
    }

    @Transactional
    List<Upload> stale(OffsetDateTime before) {
        List<Upload> found = NativeSql.list(em, """
                select u.id, u.draft_id, u.name, u.store_id, u.parts from wandb_artifact_uploads u
                join wandb_artifact_drafts d on d.id = u.draft_id
                where u.created_at < ?1 or (d.version_id is null and d.created_at < ?1)
                order by u.id limit ?2 for update of u skip locked""", WandbUploads::upload, before,
                WandbDraftSweeper.BATCH);
        if (!found.isEmpty()) {
            NativeSql.update(em, "delete from wandb_artifact_uploads where id = any(cast(?1 as bigint[]))",
                    "{" + String.join(",", found.stream().map(u -> Long.toString(u.id())).toList()) + "}");
        }
        return found;
    }

    private static Object[] path(Object[] at, Object... more) {
        List<Object> all = new ArrayList<>(List.of(at));
        all.addAll(List.of(more));
        return all.toArray();
    }
}

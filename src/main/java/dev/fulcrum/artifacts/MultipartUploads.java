package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Multipart uploads of a draft's files ({@link ArtifactDrafts}), as S3 and the W&B SDK make them for big files: an
 * upload is started in the blob store (a row of {@code artifact_multipart_uploads}); each part is streamed to the store
 * on its own and its MD5 kept (hex, the ETag a client sends back); the completion joins the parts into the file's blob,
 * whose MD5 must be the one the file was announced with, and records the file as uploaded, as a single upload does.
 * Uploads never completed are aborted by {@link ArtifactDraftSweeper}. Meters: {@code fulcrum.wandb.multipart.uploads}
 * and {@code .bytes} (the names of when only the W&B door made them).
 */
@ApplicationScoped
@Startup // its meters are on the page from the start, at zero
public class MultipartUploads {

    private static final Logger LOG = Logger.getLogger(MultipartUploads.class);

    /** S3's most parts. */
    public static final int MAX_PARTS = 10_000;

    @Inject
    DraftStatements statements;

    @Inject
    ArtifactDrafts drafts;

    @Inject
    BlobStore blobs;

    @Inject
    BlobChecksums checksums;

    @Inject
    BlobCollector collector;

    @Inject
    FulcrumConfig config;

    @Inject
    MeterRegistry registry;

    private Counter uploads;
    private Counter uploadedBytes;

    @PostConstruct
    void meters() {
        uploads = registry.counter("fulcrum.wandb.multipart.uploads");
        uploadedBytes = registry.counter("fulcrum.wandb.multipart.bytes");
    }

    /** An upload as stored: {@code storeId} is the blob store's id of it. */
    public record Upload(long id, long draftId, String name, String storeId, int parts) {
    }

    /**
     * Starts a multipart upload of {@code parts} parts (1 to {@link #MAX_PARTS}) of an announced file of a draft not
     * committed; an upload of the same file started before is aborted. The caller checked the right to write.
     */
    public Upload start(long draftId, String name, int parts) {
        if (parts < 1 || parts > MAX_PARTS) {
            throw ApiException.invalid(Violation.of("1 to " + MAX_PARTS + " parts", "value_error", "parts"));
        }
        ArtifactDrafts.uncommitted(drafts.draft(draftId));
        drafts.file(draftId, name);
        for (Upload earlier : uploadsOf(draftId, name)) {
            end(earlier);
        }
        String storeId;
        try {
            storeId = blobs.startParts();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long id = insert(draftId, name, storeId, parts);
        return new Upload(id, draftId, name, storeId, parts);
    }

    @Transactional
    long insert(long draftId, String name, String storeId, int parts) {
        return statements.insertUpload(draftId, name, storeId, parts);
    }

    @Transactional
    List<Upload> uploadsOf(long draftId, String name) {
        return statements.uploadsOf(draftId, name);
    }

    /** The upload; 404 when there is none (never started, completed or aborted). */
    @Transactional
    public Upload upload(long id) {
        return statements.upload(id).orElseThrow(() -> ApiException.notFound("No upload " + id));
    }

    /** The MD5s (hex) of the upload's parts stored, by part number. */
    @Transactional
    public Map<Integer, String> parts(long uploadId) {
        return statements.parts(uploadId);
    }

    /**
     * Streams a part of {@code length} bytes into the store; answers its MD5 in hex. A part whose MD5 is not
     * {@code contentMd5} (base64; null or blank: not checked) is a 422 and counts as not uploaded. The caller checked
     * the right to write (a signed URL stands for it).
     */
    public String putPart(long uploadId, int part, String contentMd5, InputStream body, long length) {
        Upload upload = upload(uploadId);
        if (part < 1 || part > upload.parts()) {
            throw ApiException.notFound("No part " + part + " in upload " + uploadId);
        }
        ArtifactDrafts.uncommitted(drafts.draft(upload.draftId()));
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
        statements.deletePart(uploadId, part);
    }

    @Transactional
    void recordPart(long uploadId, int part, String md5) {
        statements.putPart(uploadId, part, md5);
    }

    /**
     * Joins an upload's parts (the caller checked them against the client's list) into the file's blob and ends the
     * upload, whether the join succeeds or not; the blob's MD5 must be the one the file was announced with (else 422 at
     * {@code at}, the request's field naming the upload). Answers the file's MD5 (base64).
     */
    public String complete(Upload upload, Object... at) {
        if (!claim(upload.id())) {
            throw ApiException.notFound("No upload " + upload.id());
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
        String announced = announcedMd5(upload);
        checksums.record(joined.blob().digest(), joined.md5());
        if (!joined.md5().equals(announced)) {
            throw ApiException.invalid(Violation
                    .of("The file's MD5 is " + joined.md5() + ", not the announced " + announced, "value_error", at));
        }
        drafts.recordFile(upload.draftId(), upload.name(), joined.blob());
        uploads.increment();
        uploadedBytes.increment(joined.blob().size());
        return joined.md5();
    }

    @Transactional
    String announcedMd5(Upload upload) {
        return statements.file(upload.draftId(), upload.name()).map(ArtifactDrafts.DraftFile::md5).orElse(null);
    }

    /** Takes the upload away from any other completion or sweep; false when another took it first. */
    @Transactional
    boolean claim(long uploadId) {
        return statements.deleteUpload(uploadId);
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
        } while (stale.size() == DraftStatements.BATCH);
        return total;
    }

    @Transactional
    List<Upload> stale(OffsetDateTime before) {
        return statements.takeStaleUploads(before);
    }
}

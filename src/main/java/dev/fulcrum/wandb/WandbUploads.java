package dev.fulcrum.wandb;

import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.MultipartUploads;
import dev.fulcrum.artifacts.MultipartUploads.Upload;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Multipart uploads of artifact files as the W&B SDK makes them for files of 2 GiB and more, translated into the
 * artifacts store's {@link MultipartUploads}: {@code createArtifactFiles} with {@code uploadPartsInput} starts one and
 * hands out a signed URL per part; each part's PUT is a stored part (its MD5 the ETag the SDK sends back);
 * {@code completeMultipartUploadArtifact} checks the SDK's list of parts and joins them.
 */
@ApplicationScoped
public class WandbUploads {

    @Inject
    MultipartUploads uploads;

    @Inject
    SecretCipher cipher;

    @Inject
    WandbArtifacts artifacts;

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
        if (count > MultipartUploads.MAX_PARTS) {
            throw ApiException
                    .invalid(Violation.of("At most " + MultipartUploads.MAX_PARTS + " parts", "value_error", path(at)));
        }
        return uploads.start(draft.id(), name, count);
    }

    /** The signed URL of a part. */
    String partUrl(String base, long upload, int part) {
        long expires = Instant.now().getEpochSecond() + WandbArtifacts.URL_SECONDS;
        return base + "wandb/artifact-uploads/" + upload + "/parts/" + part + "?expires=" + expires + "&signature="
                + cipher.sign(WandbArtifacts.SIGNING, "PUT part " + upload + " " + part + " " + expires);
    }

    /** A part's PUT to its signed URL, after checking the signature; answers the part's MD5 in hex (its ETag). */
    String putPart(long uploadId, int part, long expires, String signature, String contentMd5, InputStream body,
            long length) {
        artifacts.check("PUT part " + uploadId + " " + part, expires, signature);
        return uploads.putPart(uploadId, part, contentMd5, body, length);
    }

    /**
     * {@code completeMultipartUploadArtifact}: every part must be listed with the ETag its upload answered (422
     * otherwise, and the upload stays open for another try); then the parts are joined and the upload ends, whether the
     * join succeeds or not. Answers the file's MD5 (base64).
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
        Upload upload = uploads.upload(uploadId);
        if (upload.draftId() != draft.id()) {
            throw ApiException.notFound("No upload " + uploadId + " for this artifact");
        }
        if (!(draft.id() + "/" + upload.name()).equals(input.get("storagePath"))) {
            throw ApiException.invalid(Violation.of("Not the storage path of the upload's file", "value_error", "body",
                    "input", "storagePath"));
        }
        Map<Integer, String> stored = uploads.parts(uploadId);
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
        return uploads.complete(upload, "body", "input", "uploadID");
    }

    private static Object[] path(Object[] at, Object... more) {
        List<Object> all = new ArrayList<>(List.of(at));
        all.addAll(List.of(more));
        return all.toArray();
    }
}

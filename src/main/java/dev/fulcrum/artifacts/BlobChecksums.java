package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The MD5 of each blob (base64), beside the SHA-256 that names it: the W&B SDK checks every file it downloads against
 * the MD5 its manifest gives, whichever door wrote the file. Every path that stores artifact or checkpoint content goes
 * through {@link #put}, which hashes in the same pass as the store; a blob stored before MD5s were kept has its MD5
 * computed once, when it is first asked for, and kept.
 */
@ApplicationScoped
public class BlobChecksums {

    @Inject
    BlobStore blobs;

    @Inject
    EntityManager em;

    @Inject
    BlobCollector collector;

    /** A stored blob and the MD5 of its bytes (base64). */
    public record Checked(BlobStore.Blob blob, String md5) {
    }

    /**
     * Streams {@code content} into the blob store (at most {@code maxBytes}) and keeps its MD5, in the caller's
     * transaction when there is one (the upload itself holds no database connection otherwise).
     */
    public Checked put(InputStream content, long maxBytes) throws IOException {
        MessageDigest md5 = md5();
        BlobStore.Blob blob;
        try (InputStream in = new DigestInputStream(content, md5)) {
            blob = blobs.put(in, maxBytes, written -> collector.written(written.digest()));
        }
        String value = Base64.getEncoder().encodeToString(md5.digest());
        QuarkusTransaction.joiningExisting().run(() -> keep(blob.digest(), value));
        return new Checked(blob, value);
    }

    /** Keeps the MD5 (base64) of a blob stored by other means (a multipart upload hashes as it joins). */
    @Transactional
    public void record(String digest, String md5) {
        keep(digest, md5);
    }

    /** The MD5s of stored blobs by their digest, computing (and keeping) those not known yet. */
    @Transactional
    public Map<String, String> md5s(List<BlobStore.Blob> stored) {
        Map<String, String> found = new HashMap<>();
        if (stored.isEmpty()) {
            return found;
        }
        BlobStatements.md5s(em, stored.stream().map(BlobStore.Blob::digest).distinct().toList(), found);
        for (BlobStore.Blob blob : stored) {
            if (!found.containsKey(blob.digest())) {
                String value = compute(blob);
                keep(blob.digest(), value);
                found.put(blob.digest(), value);
            }
        }
        return found;
    }

    private String compute(BlobStore.Blob blob) {
        MessageDigest md5 = md5();
        try (InputStream in = new DigestInputStream(blobs.open(blob.digest(), 0, blob.size()), md5)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Base64.getEncoder().encodeToString(md5.digest());
    }

    private void keep(String digest, String md5) {
        BlobStatements.keepMd5(em, digest, md5);
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

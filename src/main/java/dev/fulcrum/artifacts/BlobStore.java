package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Content-addressed storage of file contents: a blob is named by the lowercase hex SHA-256 of its bytes, so storing the
 * same content twice keeps one copy. Writes are streamed and atomic: a blob is either complete or absent.
 */
public interface BlobStore {

    /** A stored blob. */
    record Blob(String digest, long size) {
    }

    /** Thrown by {@link #put} when the content is larger than the limit; nothing is kept. */
    class TooLarge extends IOException {
        public TooLarge(long limit) {
            super("larger than " + limit + " bytes");
        }
    }

    /** Streams {@code content} into the store, reading it once; at most {@code maxBytes}. */
    default Blob put(InputStream content, long maxBytes) throws IOException {
        return put(content, maxBytes, blob -> {
        });
    }

    /**
     * As {@link #put(InputStream, long)}, calling {@code publishing} once the content is hashed and before the store
     * looks whether the blob exists: the collector's guard ({@link BlobCollector}) marks the blob as just written
     * there, so a sweep either removed it before (and this put writes it again) or sees it fresh and keeps it.
     */
    Blob put(InputStream content, long maxBytes, Consumer<Blob> publishing) throws IOException;

    /** A stored blob as listed, with when it was last written. */
    record Listed(String digest, long size, Instant modified) {
    }

    /** Calls {@code each} for every blob of the store (not the parts of uploads under way). */
    void list(Consumer<Listed> each) throws IOException;

    /** Removes a blob (a blob already gone is no error). */
    void delete(String digest) throws IOException;

    /** The blob's size, if it is stored. */
    Optional<Long> size(String digest) throws IOException;

    /** Reads {@code length} bytes of the blob from {@code offset}. */
    InputStream open(String digest, long offset, long length) throws IOException;

    /** A blob made by {@link #completeParts}, with the MD5 of its bytes (base64), hashed in the same pass. */
    record Joined(Blob blob, String md5) {
    }

    /** Thrown by {@link #completeParts} when a part was never stored. */
    class MissingPart extends IOException {
        public MissingPart(int number) {
            super("part " + number + " was not uploaded");
        }
    }

    /**
     * Starts a multipart upload: parts come in any order, each streamed to the store on its own (the file system keeps
     * each as a file, S3 as a part of an S3 multipart upload), and the blob exists only once {@link #completeParts}
     * joined them. Answers the store's id of the upload.
     */
    String startParts() throws IOException;

    /**
     * Streams part {@code number} (1 to 10,000) of an upload into the store; a part stored again replaces the earlier
     * one. Answers the part's MD5 (lowercase hex), S3's ETag for it.
     */
    String putPart(String upload, int number, InputStream content, long length) throws IOException;

    /**
     * Joins parts 1 to {@code count} in order into a blob (at most {@code maxBytes}), named by its SHA-256 as every
     * blob, and forgets the upload; nothing of the parts stays. {@code publishing} is called as by {@link #put}.
     */
    Joined completeParts(String upload, int count, long maxBytes, Consumer<Blob> publishing) throws IOException;

    /** Forgets an upload never completed and its parts (an upload unknown to the store is no error). */
    void abortParts(String upload) throws IOException;
}

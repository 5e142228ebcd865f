package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

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
    Blob put(InputStream content, long maxBytes) throws IOException;

    /** The blob's size, if it is stored. */
    Optional<Long> size(String digest) throws IOException;

    /** Reads {@code length} bytes of the blob from {@code offset}. */
    InputStream open(String digest, long offset, long length) throws IOException;
}

package dev.fulcrum.artifacts;

/**
 * The blobs one package's tables use, for {@link BlobCollector}: each package that keeps blob digests contributes a
 * bean of this type, so no query names every package's tables. A blob none of them references (and not written within
 * the grace period) is removed.
 */
public interface BlobReferences {

    /**
     * An SQL condition, true when the digest {@code ?1} (text) is in use by this package, e.g.
     * {@code exists (select 1 from artifact_files where digest = ?1)}.
     */
    String uses();
}

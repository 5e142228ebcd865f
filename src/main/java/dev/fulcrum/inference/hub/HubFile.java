package dev.fulcrum.inference.hub;

/**
 * A file of a repository as the Hub lists it: its path, size and the sha256 of its content (the LFS {@code oid}; null
 * when the listing states none, then taken from the download's {@code X-Linked-Etag}).
 */
public record HubFile(String path, long size, String sha256) {
}

package dev.fulcrum.inference.hub;

import java.util.List;

/**
 * A pull as the API shows it: the name and revision asked for, the commit and files chosen, the state ({@code queued},
 * {@code downloading}, {@code verifying}, {@code ready}, {@code failed}), bytes held of the total, the recent speed
 * (null when not downloading) and the error in words when failed.
 */
public record PullStatus(String name, String revision, String commit, List<String> files, String state,
        long completedBytes, Long totalBytes, Double bytesPerSecond, String error) {

    public static final String QUEUED = "queued";
    public static final String DOWNLOADING = "downloading";
    public static final String VERIFYING = "verifying";
    public static final String READY = "ready";
    public static final String FAILED = "failed";

    /** The progress in words, for the 503 of a completion asked of a model still pulling. */
    public String progress() {
        if (totalBytes == null || totalBytes == 0) {
            return state;
        }
        return "%s, %s of %s (%d%%)".formatted(state, PullStatus.bytes(completedBytes), PullStatus.bytes(totalBytes),
                completedBytes * 100 / totalBytes);
    }

    static String bytes(long n) {
        if (n < 1024 * 1024) {
            return "%.1f kB".formatted(n / 1024.0);
        }
        if (n < 1024L * 1024 * 1024) {
            return "%.1f MB".formatted(n / (1024.0 * 1024));
        }
        return "%.2f GB".formatted(n / (1024.0 * 1024 * 1024));
    }
}

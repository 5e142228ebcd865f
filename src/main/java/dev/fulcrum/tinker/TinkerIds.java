package dev.fulcrum.tinker;

import java.security.SecureRandom;

/** Ids of sessions and futures: a prefix and random letters and digits (never {@code :} or {@code /}). */
final class TinkerIds {

    private static final char[] CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private TinkerIds() {
    }

    static String random(String prefix, int length) {
        StringBuilder id = new StringBuilder(prefix);
        for (int i = 0; i < length; i++) {
            id.append(CHARS[RANDOM.nextInt(CHARS.length)]);
        }
        return id.toString();
    }

    /** The model id the SDK expects for a session's n-th training client (0.38 computes it itself). */
    static String model(String sessionId, long seq) {
        return sessionId + ":train:" + seq;
    }

    /** The Fulcrum training model of a Tinker model: the same name, {@code :} written {@code -}. */
    static String trainingModelName(String modelId) {
        return modelId.replace(':', '-');
    }
}

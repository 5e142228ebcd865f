package dev.fulcrum.inference.engine.format;

import java.util.List;

/** Where a format's markers are in an answer, and what of an unfinished answer may still become one. */
final class Markers {

    private Markers() {
    }

    /** The first place any of {@code markers} starts at or after {@code from}, or -1. */
    static int first(String text, List<String> markers, int from) {
        int first = -1;
        for (String marker : markers) {
            int at = text.indexOf(marker, from);
            if (at >= 0 && (first < 0 || at < first)) {
                first = at;
            }
        }
        return first;
    }

    /**
     * How much of {@code text} is certainly not the start of one of {@code markers}: all of it but its longest end that
     * begins a marker (an answer that ends in {@code <tool_} may be writing {@code <tool_call>}).
     */
    static int settled(String text, List<String> markers) {
        int held = 0;
        for (String marker : markers) {
            for (int length = Math.min(marker.length() - 1, text.length()); length > held; length--) {
                if (text.regionMatches(text.length() - length, marker, 0, length)) {
                    held = length;
                    break;
                }
            }
        }
        return text.length() - held;
    }

    /** Null for an empty text. */
    static String orNull(String text) {
        return text == null || text.isEmpty() ? null : text;
    }

    /** Whether {@code text} at {@code at} starts {@code marker}, or is a beginning of it that the text ends in. */
    static boolean startsOrBegins(String text, int at, String marker) {
        int length = Math.min(marker.length(), text.length() - at);
        return text.regionMatches(at, marker, 0, length);
    }
}

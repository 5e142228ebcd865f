package dev.fulcrum.support;

import java.util.ArrayList;
import java.util.List;

/**
 * The bad values a hostile client sends: for a JSON field (as raw JSON text, so that numbers JSON cannot hold in a
 * double and nesting deeper than parsers allow can be written), for a path or query parameter (already percent-encoded)
 * and for a header.
 */
public final class HostileValues {

    /** A named bad value. */
    public record Bad(String name, String raw) {
    }

    /** A huge string in a body. */
    public static final int HUGE = 100_000;
    /**
     * A huge path segment or query value: longer than the 10,000 characters issue 13 names, while the whole request
     * line stays within what the HTTP server reads.
     */
    public static final int HUGE_URI = 12_000;
    /** A huge header value, within the HTTP server's limit for all headers (8 KiB). */
    public static final int HUGE_HEADER = 6_000;
    public static final int DEEP = 3_000;

    private HostileValues() {
    }

    /** Bad values for a JSON field of this type ({@code string}, {@code integer}, {@code object}, ... or null). */
    public static List<Bad> json(String type) {
        List<Bad> bad = new ArrayList<>();
        if ("array".equals(type)) {
            bad.add(new Bad("null-item", "[null]"));
        }
        bad.add(new Bad("wrong-type", "object".equals(type) || "array".equals(type) ? "\"not-a-" + type + "\""
                : "{\"not-a\":\"" + (type == null ? "value" : type) + "\"}"));
        bad.add(new Bad("null", "null"));
        bad.add(new Bad("nul-char", "\"a\\u0000b\""));
        bad.add(new Bad("lone-surrogate", "\"a\\ud800b\""));
        bad.add(new Bad("huge-string", "\"" + "x".repeat(HUGE) + "\""));
        bad.add(new Bad("deep-nesting", "[".repeat(DEEP) + "]".repeat(DEEP)));
        if ("string".equals(type)) {
            // a string field may hold JSON of its own (a payload template)
            bad.add(new Bad("deep-nesting-in-string", "\"" + "[".repeat(DEEP) + "]".repeat(DEEP) + "\""));
            bad.add(new Bad("1e400-in-string", "\"{\\\"n\\\": 1e400}\""));
        }
        bad.add(new Bad("1e400", "1e400"));
        bad.add(new Bad("negative", "-1"));
        bad.add(new Bad("2^63", "9223372036854775808"));
        return bad;
    }

    /** Bad values for a path segment or query value, percent-encoded as they go on the wire. */
    public static List<Bad> uri(String type) {
        List<Bad> bad = new ArrayList<>();
        bad.add(new Bad("wrong-type",
                "integer".equals(type) || "number".equals(type) || "boolean".equals(type) ? "not-a-" + type
                        : "%7B%22a%22%3A1%7D"));
        bad.add(new Bad("nul-char", "a%00b"));
        // a surrogate's code point in UTF-8 form (CESU-8): not UTF-8, nor any character
        bad.add(new Bad("surrogate-utf8", "a%ED%A0%80b"));
        bad.add(new Bad("huge-string", "x".repeat(HUGE_URI)));
        bad.add(new Bad("invalid-utf8", "%FF%FE%C3%28"));
        bad.add(new Bad("encoded-slash", "a%2Fb"));
        bad.add(new Bad("1e400", "1e400"));
        bad.add(new Bad("negative", "-1"));
        bad.add(new Bad("2^63", "9223372036854775808"));
        return bad;
    }

    /**
     * Bad values for a console page's query parameter, on top of {@link #uri}: what a browser's address bar lets anyone
     * type into a pager, a date field, a metric list or a filter.
     */
    public static List<Bad> console() {
        List<Bad> bad = new ArrayList<>(uri("string"));
        bad.add(new Bad("negative-5", "-5"));
        bad.add(new Bad("int-max", "2147483647"));
        bad.add(new Bad("huge-number", "99999999999999"));
        bad.add(new Bad("date-far-future", "%2B999999999-12-31"));
        bad.add(new Bad("date-far-past", "-999999999-01-01"));
        bad.add(new Bad("date-year-0", "0000-01-01"));
        bad.add(new Bad("date-invalid", "2026-02-30"));
        bad.add(new Bad("blank", "%20"));
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            list.append(i == 0 ? "" : "%2C").append('k').append(i);
        }
        bad.add(new Bad("long-list", list.toString()));
        bad.add(new Bad("regex-bomb", "((a%7B1000%7D)%7B1000%7D)%7B1000%7D"));
        bad.add(new Bad("regex-invalid", "(unclosed"));
        return bad;
    }

    /** Bad values for a request header. */
    public static List<Bad> header() {
        return List.of(new Bad("garbage", "bytes=zz-yy;;\"\""), new Bad("huge-string", "x".repeat(HUGE_HEADER)),
                new Bad("out-of-range", "bytes=99999999999999999999999-"), new Bad("negative", "bytes=-1--5"));
    }

    /** A JSON document nested {@code depth} objects deep. */
    public static String deepObject(int depth) {
        return "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
    }
}

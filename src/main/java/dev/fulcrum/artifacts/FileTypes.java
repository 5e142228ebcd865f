package dev.fulcrum.artifacts;

import java.util.regex.Pattern;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The media type a file is stored and served with: the upload part's {@code Content-Type} when it is one media type as
 * RFC 9110 writes it ({@code type/subtype} and {@code ; name=value} parameters), else refused at upload. A type stored
 * before this rule that a response cannot carry is served as {@code application/octet-stream}, the type of bytes one
 * knows nothing about.
 */
final class FileTypes {

    static final String BYTES = "application/octet-stream";

    /** The longest type kept, in characters. */
    static final int MAX_LENGTH = 255;

    private static final String TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
    private static final Pattern MEDIA_TYPE = Pattern.compile(TOKEN + "/" + TOKEN + "(\\s*;\\s*" + TOKEN + "=(" + TOKEN
            + "|\"([\\t\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*\"))*\\s*");

    private FileTypes() {
    }

    static boolean parseable(String type) {
        return type != null && type.length() <= MAX_LENGTH && MEDIA_TYPE.matcher(type).matches();
    }

    /** The type an upload's part is stored with (none when it gave none); one that is not a media type is a 422. */
    static String uploaded(String type, Object... loc) {
        if (type == null) {
            return null;
        }
        String stripped = type.strip();
        if (!parseable(stripped)) {
            throw ApiException.invalid(Violation.of(
                    "The part's Content-Type must be one media type such as "
                            + "text/plain or application/json; charset=utf-8 (at most " + MAX_LENGTH + " characters)",
                    "content_type", loc));
        }
        return stripped;
    }

    /** The type a stored file is served with. */
    static String served(String stored) {
        return parseable(stored) ? stored : BYTES;
    }
}

package dev.fulcrum.datasets;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** How a request names a version: its digest, {@code latest}, or {@code v<N>}. */
public record VersionSelector(String digest, Integer index, boolean latest) {

    private static final Pattern INDEX = Pattern.compile("v(\\d{1,9})");
    private static final Pattern DIGEST = Pattern.compile("[A-Za-z0-9]{43}");

    public static VersionSelector parse(String value, Object... loc) {
        if ("latest".equals(value)) {
            return new VersionSelector(null, null, true);
        }
        Matcher index = INDEX.matcher(value == null ? "" : value);
        if (index.matches()) {
            return new VersionSelector(null, Integer.parseInt(index.group(1)), false);
        }
        if (value != null && DIGEST.matcher(value).matches()) {
            return new VersionSelector(value, null, false);
        }
        throw ApiException.invalid(Violation.of("Must be a 43-character object digest, 'latest' or 'v<N>'",
                "string_pattern_mismatch", loc));
    }

    @Override
    public String toString() {
        return latest ? "latest" : index != null ? "v" + index : digest;
    }
}

package dev.fulcrum.platform.http;

import java.util.ArrayList;
import java.util.List;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Checks of the paging and list query parameters that the interfaces share. */
public final class QueryParams {

    private QueryParams() {
    }

    /** {@code limit}, or {@code fallback} when absent; 422 outside {@code min..max}. */
    public static int limit(Integer limit, int fallback, int min, int max) {
        if (limit == null) {
            return fallback;
        }
        if (limit < min || limit > max) {
            throw ApiException.invalid(
                    Violation.of("Must be between " + min + " and " + max, "less_than_equal", "query", "limit"));
        }
        return limit;
    }

    /** {@code offset}, 0 when absent; 422 when negative. */
    public static int offset(Integer offset) {
        if (offset == null) {
            return 0;
        }
        if (offset < 0) {
            throw ApiException.invalid(Violation.of("Must be 0 or more", "greater_than_equal", "query", "offset"));
        }
        return offset;
    }

    /** Values of a repeatable parameter that may also be comma-separated. */
    public static List<String> splitList(List<String> values) {
        List<String> all = new ArrayList<>();
        if (values != null) {
            for (String value : values) {
                for (String part : value.split(",")) {
                    if (!part.isBlank()) {
                        all.add(part.trim());
                    }
                }
            }
        }
        return all;
    }
}

package dev.fulcrum.runs;

import java.util.ArrayList;
import java.util.List;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/** Checks of the {@code limit}, {@code offset} and list parameters of the runs API. */
final class Paging {

    static final int MAX_LIMIT = 10_000;

    private Paging() {
    }

    static int limit(Integer limit, int fallback) {
        if (limit == null) {
            return fallback;
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw ApiException
                    .invalid(Violation.of("Must be between 1 and " + MAX_LIMIT, "less_than_equal", "query", "limit"));
        }
        return limit;
    }

    static int offset(Integer offset) {
        if (offset == null) {
            return 0;
        }
        if (offset < 0) {
            throw ApiException.invalid(Violation.of("Must be 0 or more", "greater_than_equal", "query", "offset"));
        }
        return offset;
    }

    /** Values of a repeatable parameter that may also be comma-separated. */
    static List<String> splitList(List<String> values) {
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

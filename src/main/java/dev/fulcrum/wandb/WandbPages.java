package dev.fulcrum.wandb;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The pages of W&B's listings (relay connections): {@code first} items after the cursor {@code after}, a cursor being
 * the number of items before the next one, so items added or removed between pages move it.
 */
final class WandbPages {

    static final int MAX_PER_PAGE = 1000;

    private WandbPages() {
    }

    /** The page size asked ({@code first}), 1 to {@value #MAX_PER_PAGE}; {@code fallback} when not given. */
    static int size(Integer first, int fallback) {
        int size = first == null ? fallback : first;
        if (size < 1 || size > MAX_PER_PAGE) {
            throw ApiException
                    .invalid(Violation.of("Must be 1 to " + MAX_PER_PAGE, "less_than_equal", "query", "first"));
        }
        return size;
    }

    /** A cursor of a listing: the number of items before the next one. */
    static int offset(String after) {
        if (after == null || after.isEmpty()) {
            return 0;
        }
        try {
            int offset = Integer.parseInt(after);
            if (offset >= 0) {
                return offset;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.invalid(Violation.of("Not a cursor of this listing", "value_error", "query", "after"));
    }

    /** The cursor of the item at {@code index} of a listing: the number of items up to it. */
    static String cursor(int index) {
        return Integer.toString(index + 1);
    }

    /** A connection of {@code edges} (each with its {@code cursor}), and its total when the listing counts it. */
    static Map<String, Object> connection(List<Map<String, Object>> edges, boolean hasNextPage, Long totalCount) {
        Map<String, Object> pageInfo = new HashMap<>();
        pageInfo.put("hasNextPage", hasNextPage);
        pageInfo.put("endCursor", edges.isEmpty() ? null : edges.get(edges.size() - 1).get("cursor"));
        Map<String, Object> connection = new HashMap<>();
        connection.put("edges", edges);
        connection.put("pageInfo", pageInfo);
        if (totalCount != null) {
            connection.put("totalCount", totalCount);
        }
        return connection;
    }
}

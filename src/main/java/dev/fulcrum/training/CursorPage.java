package dev.fulcrum.training;

import java.util.List;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** One page of a list read with a cursor ({@code after}): the items, and whether more follow. */
public record CursorPage<T>(List<T> items, boolean hasMore) {

    static final int DEFAULT_SIZE = 20;
    static final int MAX_SIZE = 100;

    /** The numeric id an {@code after} cursor names (0 without one); 422 naming what it must be otherwise. */
    static long after(String after, String what) {
        if (after == null) {
            return 0;
        }
        try {
            return Long.parseLong(after);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(Violation.of("Must be " + what, "value_error", "query", "after"));
        }
    }

    /** The page of {@code size} items from rows read with one more than {@code size}. */
    static <T> CursorPage<T> of(List<T> rows, int size) {
        boolean more = rows.size() > size;
        return new CursorPage<>(more ? rows.subList(0, size) : rows, more);
    }
}

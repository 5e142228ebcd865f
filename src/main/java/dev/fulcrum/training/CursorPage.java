package dev.fulcrum.training;

import java.util.List;

/** One page of a list read with a cursor ({@code after}): the items, and whether more follow. */
public record CursorPage<T>(List<T> items, boolean hasMore) {

    static final int DEFAULT_SIZE = 20;
    static final int MAX_SIZE = 100;

    /** The page of {@code size} items from rows read with one more than {@code size}. */
    static <T> CursorPage<T> of(List<T> rows, int size) {
        boolean more = rows.size() > size;
        return new CursorPage<>(more ? rows.subList(0, size) : rows, more);
    }
}

package dev.fulcrum.runs;

import java.time.OffsetDateTime;
import java.util.List;

import com.google.re2j.Pattern;

/**
 * A parsed filter over a project's runs: conditions on a run's fields joined by {@link And} and {@link Or}. Every value
 * a condition holds was checked when it was parsed (its type fits the field and the operator, regexes went through
 * {@link dev.fulcrum.platform.json.RegularExpressions}); {@link RunSearch} turns the tree into SQL whose values are all
 * parameters.
 */
public sealed interface RunFilter {

    /** Every part holds. */
    record And(List<RunFilter> parts) implements RunFilter {
    }

    /** At least one part holds. */
    record Or(List<RunFilter> parts) implements RunFilter {
    }

    /** The run fields a filter or an order may name. */
    enum Column {
        NAME, DISPLAY_NAME, STATE, CREATED_AT, UPDATED_AT, TAGS, CONFIG, SUMMARY;

        /** Whether the column is a JSON document whose values are reached by a path. */
        public boolean json() {
            return this == CONFIG || this == SUMMARY;
        }
    }

    /** A column, and for {@link Column#CONFIG} and {@link Column#SUMMARY} the path of keys into it. */
    record Field(Column column, List<String> path) {
    }

    /** The comparisons a condition makes. */
    enum Op {
        EQ, NE, GT, GTE, LT, LTE, IN, NIN, EXISTS, REGEX
    }

    /**
     * A condition on one field. {@code value} is, by operator and field: a string, a {@link java.math.BigDecimal}, a
     * boolean, null, an {@link OffsetDateTime} (time columns) or, for JSON fields, the value's JSON text
     * ({@link Json}); a list of them for {@link Op#IN} and {@link Op#NIN}; a boolean for {@link Op#EXISTS}; a compiled
     * pattern for {@link Op#REGEX}.
     */
    record Condition(Field field, Op op, Object value) implements RunFilter {
    }

    /** A JSON value as its JSON text, compared as {@code jsonb}. */
    record Json(String text) {
    }

    /** The order of a listing: a field, ascending or descending (runs of equal values in the order of their ids). */
    record Order(Field field, boolean descending) {
    }

    /** A compiled regex of a condition (found anywhere in the field's text, as MongoDB's {@code $regex}). */
    static boolean matches(Object pattern, String text) {
        return text != null && ((Pattern) pattern).matcher(text).find();
    }
}

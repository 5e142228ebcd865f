package dev.fulcrum.traces;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The SQL of Weave's query language ({@code query.$expr}, in calls' and feedback's queries): a SQL condition with
 * numbered parameters ({@link NativeSql#param}): {@code $and}, {@code $or}, {@code $not}, {@code $eq}, {@code $gt},
 * {@code $gte}, {@code $lt}, {@code $lte}, {@code $in} and {@code $contains} over {@code {"$getField": field}},
 * {@code {"$literal": value}} and {@code {"$convert": {"input": field, "to": type}}}. Fields map to columns through a
 * fixed table, so no text of the request reaches the SQL; anything else is a 422 naming where it is. The fields of
 * calls are {@link CallQueryStatements#FIELDS}, those of feedback {@link FeedbackStatements#QUERYABLE}.
 */
final class ExpressionStatements {

    /**
     * A column of the fixed table; {@code time} columns compare with ISO-8601 strings or epoch seconds. A column named
     * {@code prefix.*} in the table reads any key path below {@code prefix} of that JSON text column ({@code sql}).
     */
    record Column(String sql, boolean time) {
    }

    /**
     * What {@code $convert} makes of a text ({@code %s}): null when it does not convert, as the hosted server's
     * {@code toFloat64OrNull} and kin, so that no stored value can make a statement fail. Numbers are PostgreSQL's
     * {@code numeric} (exponents of at most three digits, which it always holds).
     */
    private static final Map<String, String> CONVERSIONS = Map.of("double",
            "(case when %s ~ '^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]{1,3})?\\s*$'"
                    + " then cast(trim(%<s) as numeric) end)",
            "int", "(case when %s ~ '^\\s*[-+]?[0-9]{1,18}\\s*$' then cast(trim(%<s) as bigint) end)", "string", "(%s)",
            "bool",
            "(case lower(trim(%s)) when 'true' then true when '1' then true when 'false' then false when '0' then false"
                    + " end)",
            "exists", "(%s is not null)");

    /** The epoch seconds of the first and the last second of years 1 to 9999 (UTC). */
    static final long MIN_EPOCH_SECONDS = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
    static final long MAX_EPOCH_SECONDS = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

    private final Map<String, Column> fields;
    private final List<Object> params;

    private ExpressionStatements(Map<String, Column> fields, List<Object> params) {
        this.fields = fields;
        this.params = params;
    }

    /**
     * The condition of {@code expr} (found at {@code loc}), its parameters added to {@code params}; {@code fields}
     * names every field that may be read.
     */
    static String compile(JsonNode expr, Map<String, Column> fields, List<Object> params, Object... loc) {
        return new ExpressionStatements(fields, params).condition(expr, List.of(loc));
    }

    private String condition(JsonNode expr, List<Object> loc) {
        if (expr == null || !expr.isObject() || expr.size() != 1) {
            throw invalid("An expression is an object with one operator", loc);
        }
        String op = expr.fieldNames().next();
        JsonNode args = expr.get(op);
        List<Object> at = append(loc, op);
        switch (op) {
            case "$and", "$or" -> {
                if (!args.isArray() || args.isEmpty()) {
                    throw invalid(op + " takes a non-empty list of expressions", at);
                }
                List<String> parts = new ArrayList<>();
                for (int i = 0; i < args.size(); i++) {
                    parts.add("(" + condition(args.get(i), append(at, i)) + ")");
                }
                return String.join(op.equals("$and") ? " and " : " or ", parts);
            }
            case "$not" -> {
                JsonNode inner = args.isArray() && args.size() == 1 ? args.get(0) : args;
                return "not coalesce((" + condition(inner, append(at, 0)) + "), false)";
            }
            case "$eq", "$gt", "$gte", "$lt", "$lte" -> {
                if (!args.isArray() || args.size() != 2) {
                    throw invalid(op + " takes two operands", at);
                }
                String sqlOp = switch (op) {
                    case "$eq" -> "=";
                    case "$gt" -> ">";
                    case "$gte" -> ">=";
                    case "$lt" -> "<";
                    default -> "<=";
                };
                return comparison(args.get(0), args.get(1), sqlOp, at);
            }
            case "$in" -> {
                if (!args.isArray() || args.size() != 2 || !args.get(1).isArray()) {
                    throw invalid("$in takes an operand and a list of operands", at);
                }
                if (args.get(1).isEmpty()) {
                    return "false";
                }
                List<String> parts = new ArrayList<>();
                for (int i = 0; i < args.get(1).size(); i++) {
                    parts.add(comparison(args.get(0), args.get(1).get(i), "=", append(at, 1, i)));
                }
                return String.join(" or ", parts);
            }
            case "$contains" -> {
                Column column = field(args.get("input"), append(at, "input"));
                if (column.time()) {
                    // a time column holds no text to search
                    throw invalid("$contains reads a text field", append(at, "input", "$getField"));
                }
                JsonNode substr = literal(args.get("substr"), append(at, "substr"));
                if (substr == null || !substr.isTextual()) {
                    throw invalid("$contains takes a string literal as substr", append(at, "substr"));
                }
                boolean insensitive = args.path("case_insensitive").asBoolean(false);
                String pattern = NativeSql.param(params,
                        "%" + substr.textValue().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%");
                return column.sql() + (insensitive ? " ilike " : " like ") + pattern;
            }
            default -> throw invalid("Unsupported operator " + op, at);
        }
    }

    private String comparison(JsonNode left, JsonNode right, String op, List<Object> loc) {
        if (left != null && left.has("$literal") && right != null && right.has("$literal")) {
            // two constants (the SDK's "everything" query is 1 = 1): decided here
            JsonNode a = left.get("$literal");
            JsonNode b = right.get("$literal");
            if (op.equals("=")) {
                return a.equals(b) ? "true" : "false";
            }
            if (!(a.isNumber() && b.isNumber()) && !(a.isTextual() && b.isTextual())) {
                throw invalid("Only numbers or strings are ordered", loc);
            }
            int c = a.isNumber() ? Double.compare(a.doubleValue(), b.doubleValue())
                    : a.textValue().compareTo(b.textValue());
            boolean holds = switch (op) {
                case ">" -> c > 0;
                case ">=" -> c >= 0;
                case "<" -> c < 0;
                default -> c <= 0;
            };
            return holds ? "true" : "false";
        }
        if (left != null && left.has("$literal") && right != null
                && (right.has("$getField") || right.has("$convert"))) {
            String flipped = switch (op) {
                case ">" -> "<";
                case ">=" -> "<=";
                case "<" -> ">";
                case "<=" -> ">=";
                default -> op;
            };
            return comparison(right, left, flipped, loc);
        }
        if (left != null && left.has("$convert")) {
            return converted(left, right, op, loc);
        }
        Column column = field(left, append(loc, 0));
        JsonNode value = literal(right, append(loc, 1));
        if (value == null || value.isNull()) {
            if (!op.equals("=")) {
                throw invalid("Only $eq compares with null", loc);
            }
            return column.sql() + " is null";
        }
        Object param;
        if (column.time()) {
            param = time(value, append(loc, 1));
        } else if (value.isTextual()) {
            param = value.textValue();
        } else if (value.isNumber() || value.isBoolean()) {
            param = value.asText();
        } else {
            throw invalid("A literal compared with a field is a string, number or boolean", append(loc, 1));
        }
        return column.sql() + " " + op + " " + NativeSql.param(params, param);
    }

    /**
     * A {@code $convert} of a text field compared with a literal, the literal converted alike ({@code exists}: the
     * literal read as a boolean); a value that does not convert is null, so it matches nothing but null.
     */
    private String converted(JsonNode operand, JsonNode right, String op, List<Object> loc) {
        JsonNode spec = operand.get("$convert");
        List<Object> at = append(loc, 0, "$convert");
        if (spec == null || !spec.isObject() || !spec.path("to").isTextual()
                || !CONVERSIONS.containsKey(spec.get("to").textValue())) {
            throw invalid("$convert takes {\"input\": field, \"to\": one of "
                    + String.join(", ", new java.util.TreeSet<>(CONVERSIONS.keySet())) + "}", at);
        }
        String to = spec.get("to").textValue();
        Column column = field(spec.get("input"), append(at, "input"));
        if (column.time()) {
            throw invalid("$convert reads a text field", append(at, "input", "$getField"));
        }
        String field = CONVERSIONS.get(to).formatted(column.sql());
        JsonNode value = literal(right, append(loc, 1));
        if (value == null || value.isNull()) {
            if (!op.equals("=")) {
                throw invalid("Only $eq compares with null", loc);
            }
            return field + " is null";
        }
        if (!value.isValueNode()) {
            throw invalid("A literal compared with a field is a string, number or boolean", append(loc, 1));
        }
        String literal = CONVERSIONS.get(to.equals("exists") ? "bool" : to)
                .formatted("cast(" + NativeSql.param(params, value.asText()) + " as text)");
        return field + " " + op + " " + literal;
    }

    private Column field(JsonNode operand, List<Object> loc) {
        if (operand == null || !operand.isObject() || !operand.has("$getField")
                || !operand.get("$getField").isTextual()) {
            throw invalid("Expected {\"$getField\": field}", loc);
        }
        String name = operand.get("$getField").textValue();
        Column column = fields.get(name);
        int dot = name.indexOf('.');
        Column nested = column == null && dot > 0 ? fields.get(name.substring(0, dot) + ".*") : null;
        if (nested != null) {
            String[] path = name.substring(dot + 1).split("\\.", -1);
            return new Column("(cast(" + nested.sql() + " as jsonb) #>> " + NativeSql.param(params, path) + ")", false);
        }
        if (column == null) {
            throw invalid("Unsupported field " + operand.get("$getField").textValue() + "; one of "
                    + String.join(", ", new java.util.TreeSet<>(fields.keySet())), append(loc, "$getField"));
        }
        return column;
    }

    private JsonNode literal(JsonNode operand, List<Object> loc) {
        if (operand == null || !operand.isObject() || !operand.has("$literal")) {
            throw invalid("Expected {\"$literal\": value}", loc);
        }
        return operand.get("$literal");
    }

    private static Instant time(JsonNode value, List<Object> loc) {
        if (value.isNumber()) {
            // years 1 to 9999, as a date-time of the contract: beyond, the database's timestamps end
            double seconds = value.doubleValue();
            if (!(seconds >= MIN_EPOCH_SECONDS && seconds <= MAX_EPOCH_SECONDS)) {
                throw invalid("Epoch seconds must be between " + MIN_EPOCH_SECONDS + " and " + MAX_EPOCH_SECONDS
                        + " (years 1 to 9999)", loc);
            }
            return Instant.ofEpochMilli(Math.round(seconds * 1000));
        }
        try {
            return OffsetDateTime.parse(value.asText()).toInstant();
        } catch (DateTimeParseException e) {
            throw invalid("A time is an ISO-8601 date-time with offset or epoch seconds", loc);
        }
    }

    private static List<Object> append(List<Object> loc, Object... more) {
        List<Object> at = new ArrayList<>(loc);
        at.addAll(List.of(more));
        return at;
    }

    private static ApiException invalid(String message, List<Object> loc) {
        return ApiException.invalid(Violation.of(message, "value_error", loc.toArray()));
    }
}

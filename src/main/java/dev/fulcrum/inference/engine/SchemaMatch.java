package dev.fulcrum.inference.engine;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Objects;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Whether a JSON value (as Vert.x decodes it) matches a JSON Schema, for the keywords a GGUF model's grammars accept
 * ({@code type}, {@code properties}, {@code required}, {@code additionalProperties}, {@code items}, {@code enum},
 * {@code const}, {@code minItems}, {@code maxItems}, {@code minimum}, {@code maximum}, {@code minLength},
 * {@code maxLength}, {@code anyOf}, {@code oneOf}); other keywords are not checked. Used for the arguments of tool
 * calls a model wrote freely ({@code tool_choice} auto), which no grammar constrained.
 */
final class SchemaMatch {

    /** Deeper schemas than this do not match (a schema is the client's, the depth bounds the work). */
    private static final int MAX_DEPTH = 32;

    private SchemaMatch() {
    }

    static boolean matches(Object value, Object schema) {
        return matches(value, schema, 0);
    }

    private static boolean matches(Object value, Object schema, int depth) {
        if (depth > MAX_DEPTH) {
            return false;
        }
        if (schema instanceof Boolean accepts) {
            return accepts;
        }
        if (!(schema instanceof JsonObject rules)) {
            return true;
        }
        Object type = rules.getValue("type");
        if (type != null) {
            List<?> types = type instanceof JsonArray array ? array.getList() : List.of(type);
            if (types.stream().noneMatch(name -> isType(value, name))) {
                return false;
            }
        }
        if (rules.getValue("enum") instanceof JsonArray options
                && options.stream().noneMatch(option -> same(option, value))) {
            return false;
        }
        if (rules.containsKey("const") && !same(rules.getValue("const"), value)) {
            return false;
        }
        if (value instanceof String text) {
            int length = text.codePointCount(0, text.length());
            if (below(length, rules.getValue("minLength")) || above(length, rules.getValue("maxLength"))) {
                return false;
            }
        }
        if (value instanceof Number number) {
            if (below(number, rules.getValue("minimum")) || above(number, rules.getValue("maximum"))) {
                return false;
            }
        }
        if (value instanceof JsonArray array) {
            if (below(array.size(), rules.getValue("minItems")) || above(array.size(), rules.getValue("maxItems"))) {
                return false;
            }
            if (rules.containsKey("items")) {
                for (Object item : array) {
                    if (!matches(item, rules.getValue("items"), depth + 1)) {
                        return false;
                    }
                }
            }
        }
        if (value instanceof JsonObject object && !matchesObject(object, rules, depth)) {
            return false;
        }
        if (rules.getValue("anyOf") instanceof JsonArray options
                && options.stream().noneMatch(option -> matches(value, option, depth + 1))) {
            return false;
        }
        if (rules.getValue("oneOf") instanceof JsonArray options
                && options.stream().filter(option -> matches(value, option, depth + 1)).count() != 1) {
            return false;
        }
        return true;
    }

    private static boolean matchesObject(JsonObject object, JsonObject rules, int depth) {
        if (rules.getValue("required") instanceof JsonArray required) {
            for (Object name : required) {
                if (!(name instanceof String key) || !object.containsKey(key)) {
                    return false;
                }
            }
        }
        JsonObject properties = rules.getValue("properties") instanceof JsonObject declared ? declared
                : new JsonObject();
        for (String key : object.fieldNames()) {
            if (properties.containsKey(key)) {
                if (!matches(object.getValue(key), properties.getValue(key), depth + 1)) {
                    return false;
                }
            } else if (rules.containsKey("additionalProperties")
                    && !matches(object.getValue(key), rules.getValue("additionalProperties"), depth + 1)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isType(Object value, Object type) {
        if (!(type instanceof String name)) {
            return false;
        }
        return switch (name) {
            case "object" -> value instanceof JsonObject;
            case "array" -> value instanceof JsonArray;
            case "string" -> value instanceof String;
            case "number" -> value instanceof Number;
            case "integer" -> value instanceof Number number && isIntegral(number);
            case "boolean" -> value instanceof Boolean;
            case "null" -> value == null;
            default -> false;
        };
    }

    private static boolean isIntegral(Number number) {
        if (number instanceof Integer || number instanceof Long || number instanceof Short || number instanceof Byte
                || number instanceof BigInteger) {
            return true;
        }
        BigDecimal decimal = decimal(number);
        return decimal != null && decimal.stripTrailingZeros().scale() <= 0;
    }

    /** JSON equality: numbers by value (1 and 1.0 are the same), the rest as Vert.x compares them. */
    private static boolean same(Object expected, Object value) {
        if (expected instanceof Number a && value instanceof Number b) {
            BigDecimal x = decimal(a);
            BigDecimal y = decimal(b);
            return x != null && y != null && x.compareTo(y) == 0;
        }
        return Objects.equals(expected, value);
    }

    private static boolean below(Object value, Object bound) {
        return value instanceof Number number && bound instanceof Number limit && compare(number, limit) < 0;
    }

    private static boolean above(Object value, Object bound) {
        return value instanceof Number number && bound instanceof Number limit && compare(number, limit) > 0;
    }

    private static int compare(Number a, Number b) {
        BigDecimal x = decimal(a);
        BigDecimal y = decimal(b);
        return x == null || y == null ? 0 : x.compareTo(y);
    }

    /** The number's exact value, or null for NaN and infinities (which JSON has not). */
    private static BigDecimal decimal(Number number) {
        if (number instanceof BigDecimal decimal) {
            return decimal;
        }
        if (number instanceof BigInteger integer) {
            return new BigDecimal(integer);
        }
        if (number instanceof Double || number instanceof Float) {
            double value = number.doubleValue();
            return Double.isFinite(value) ? BigDecimal.valueOf(value) : null;
        }
        return BigDecimal.valueOf(number.longValue());
    }
}

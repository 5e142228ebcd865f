package dev.fulcrum.inference.engine.template;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The template's data as Jinja2 sees it: JSON as plain maps and lists, and Python's names for their types. */
final class PythonValues {

    /** The names a message's reasoning is passed under, as transformers looks for them. */
    private static final List<String> REASONING_FIELDS = List.of("reasoning_content", "thinking", "reasoning");

    private PythonValues() {
    }

    /**
     * The messages as transformers passes them: each a plain map, its keys whose value is null dropped (as
     * {@code apply_chat_template} does, so that {@code content: null} beside tool calls reads as absent).
     */
    static List<Object> messages(JsonArray messages) {
        List<Object> plain = new ArrayList<>(messages.size());
        for (Object message : messages) {
            if (!(message instanceof JsonObject)) {
                throw new IllegalArgumentException("a message is not a JSON object: " + message);
            }
            Map<String, Object> fields = new LinkedHashMap<>();
            ((JsonObject) message).forEach(field -> {
                if (field.getValue() != null) {
                    fields.put(field.getKey(), plain(field.getValue()));
                }
            });
            plain.add(withReasoningAliases(fields));
        }
        return plain;
    }

    /**
     * transformers' {@code _alias_reasoning_fields}: a message's reasoning, read from {@code reasoning_content},
     * {@code thinking} or {@code reasoning} (the first present), is passed as both {@code reasoning_content} (the name
     * most templates read) and {@code thinking} (GPT-OSS's), in Python's order of {@code {"thinking": r, **message,
     * "reasoning_content": r}}.
     */
    private static Map<String, Object> withReasoningAliases(Map<String, Object> message) {
        Object reasoning = REASONING_FIELDS.stream().map(message::get).filter(Objects::nonNull).findFirst()
                .orElse(null);
        if (reasoning == null) {
            return message;
        }
        Map<String, Object> aliased = new LinkedHashMap<>();
        aliased.put("thinking", reasoning);
        aliased.putAll(message);
        aliased.put("reasoning_content", reasoning);
        return aliased;
    }

    /** Vert.x JSON as Java maps (insertion order kept, as Python dicts keep it) and lists. */
    static Object plain(Object value) {
        if (value instanceof JsonObject) {
            Map<String, Object> map = new LinkedHashMap<>();
            ((JsonObject) value).forEach(field -> map.put(field.getKey(), plain(field.getValue())));
            return map;
        }
        if (value instanceof JsonArray) {
            List<Object> list = new ArrayList<>(((JsonArray) value).size());
            ((JsonArray) value).forEach(item -> list.add(plain(item)));
            return list;
        }
        return value;
    }

    /**
     * Python's {@code str(value)}, as Jinja2 prints a value: {@code True}, {@code 1.0}, {@code ['a', None]}. Null
     * prints as nothing, as Jinja2 prints an undefined value (Jinjava has one null for undefined and None).
     */
    static String str(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof CharSequence) {
            return value.toString();
        }
        StringBuilder out = new StringBuilder();
        repr(value, out);
        return out.toString();
    }

    /** Python's {@code repr(value)}, of the types JSON and templates make. */
    private static void repr(Object value, StringBuilder out) {
        if (value == null) {
            out.append("None");
        } else if (value instanceof CharSequence) {
            reprString(value.toString(), out);
        } else if (value instanceof Boolean) {
            out.append((Boolean) value ? "True" : "False");
        } else if (value instanceof Double || value instanceof Float || value instanceof BigDecimal) {
            out.append(PythonJson.floatRepr(((Number) value).doubleValue()));
        } else if (value instanceof Map) {
            out.append('{');
            String separator = "";
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                out.append(separator);
                repr(entry.getKey(), out);
                out.append(": ");
                repr(entry.getValue(), out);
                separator = ", ";
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            String separator = "";
            for (Object item : (Collection<?>) value) {
                out.append(separator);
                repr(item, out);
                separator = ", ";
            }
            out.append(']');
        } else {
            out.append(value);
        }
    }

    /** Python quotes with ' unless the text has ' and no ", and escapes what is not printable. */
    private static void reprString(String text, StringBuilder out) {
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        text.codePoints().forEach(c -> {
            if (c == quote || c == '\\') {
                out.append('\\').appendCodePoint(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (printable(c)) {
                out.appendCodePoint(c);
            } else if (c < 0x100) {
                out.append(String.format("\\x%02x", c));
            } else if (c < 0x10000) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.append(String.format("\\U%08x", c));
            }
        });
        out.append(quote);
    }

    /** Python's {@code str.isprintable} for one code point: not a control, format, separator or unassigned one. */
    private static boolean printable(int c) {
        if (c == ' ') {
            return true;
        }
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED,
                    Character.SPACE_SEPARATOR, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> false;
            default -> true;
        };
    }

    /**
     * Python's truth of a value: empty strings, collections and zero are false, every other string true. Jinjava also
     * takes the string {@code "false"} for false, so a message whose content is "False" would vanish from the prompt.
     */
    static boolean truthy(Object value) {
        if (value == null) {
            return false;
        }
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        if (value instanceof Number) {
            return ((Number) value).doubleValue() != 0;
        }
        if (value instanceof CharSequence) {
            return ((CharSequence) value).length() > 0;
        }
        if (value instanceof Collection) {
            return !((Collection<?>) value).isEmpty();
        }
        if (value instanceof Map) {
            return !((Map<?, ?>) value).isEmpty();
        }
        if (value.getClass().isArray()) {
            return java.lang.reflect.Array.getLength(value) > 0;
        }
        return true;
    }

    /** Python's {@code ==} on template values: numbers by value (True is 1), containers item by item. */
    static boolean equal(Object left, Object right) {
        if (left == null || right == null) {
            return left == right;
        }
        if ((left instanceof Number || left instanceof Boolean)
                && (right instanceof Number || right instanceof Boolean)) {
            return number(left).compareTo(number(right)) == 0;
        }
        if (left instanceof CharSequence && right instanceof CharSequence) {
            return left.toString().equals(right.toString());
        }
        if (left instanceof List && right instanceof List) {
            List<?> a = (List<?>) left;
            List<?> b = (List<?>) right;
            if (a.size() != b.size()) {
                return false;
            }
            for (int i = 0; i < a.size(); i++) {
                if (!equal(a.get(i), b.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (left instanceof Map && right instanceof Map) {
            Map<?, ?> a = (Map<?, ?>) left;
            Map<?, ?> b = (Map<?, ?>) right;
            return a.size() == b.size() && a.entrySet().stream()
                    .allMatch(entry -> b.containsKey(entry.getKey()) && equal(entry.getValue(), b.get(entry.getKey())));
        }
        return left.equals(right);
    }

    private static BigDecimal number(Object value) {
        if (value instanceof Boolean) {
            return (Boolean) value ? BigDecimal.ONE : BigDecimal.ZERO;
        }
        if (value instanceof BigDecimal) {
            return (BigDecimal) value;
        }
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            return Double.isFinite(d) ? new BigDecimal(d) : BigDecimal.valueOf(Long.MAX_VALUE); // inf: rare enough
        }
        return new BigDecimal(value.toString());
    }

    /** Python's name for the type of a template value, for error messages. */
    static String typeName(Object value) {
        if (value == null) {
            return "NoneType";
        }
        if (value instanceof CharSequence) {
            return "str";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        if (value instanceof Double || value instanceof Float) {
            return "float";
        }
        if (value instanceof Number) {
            return "int";
        }
        if (value instanceof Map) {
            return "dict";
        }
        if (value instanceof Collection) {
            return "list";
        }
        return value.getClass().getSimpleName();
    }
}

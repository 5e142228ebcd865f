package dev.fulcrum.inference.engine.template;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import dev.fulcrum.platform.json.CanonicalJson;

/**
 * Python's {@code json.dumps}, character for character: chat templates print tool schemas and tool-call arguments with
 * {@code tojson}, which Hugging Face defines as {@code json.dumps(x, ensure_ascii=False, indent=None, separators=None,
 * sort_keys=False)}, and the model was trained on that spacing (", " and ": ", non-ASCII kept).
 */
final class PythonJson {

    private final String indent;
    private final String itemSeparator;
    private final String keySeparator;
    private final boolean ensureAscii;
    private final boolean sortKeys;

    /**
     * @param indent
     *            {@code null} for one line, else the text of one level (Python's int n is n spaces)
     * @param separators
     *            {@code null} for Python's defaults, else the item and the key separator
     */
    PythonJson(String indent, List<String> separators, boolean ensureAscii, boolean sortKeys) {
        this.indent = indent;
        // with an indent, Python's default item separator drops its space (the newline follows)
        this.itemSeparator = separators != null ? separators.get(0) : indent == null ? ", " : ",";
        this.keySeparator = separators != null ? separators.get(1) : ": ";
        this.ensureAscii = ensureAscii;
        this.sortKeys = sortKeys;
    }

    String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, 0);
        return out.toString();
    }

    private void write(Object value, StringBuilder out, int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof CharSequence) {
            quote(value.toString(), out);
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value) ? "true" : "false");
        } else if (value instanceof Double || value instanceof Float) {
            out.append(floatRepr(((Number) value).doubleValue()));
        } else if (value instanceof BigDecimal) {
            out.append(floatRepr(((BigDecimal) value).doubleValue()));
        } else if (value instanceof Number) {
            out.append(value);
        } else if (value instanceof Map) {
            writeObject((Map<?, ?>) value, out, depth);
        } else if (value instanceof Collection) {
            writeArray((Collection<?>) value, out, depth);
        } else if (value instanceof Object[]) {
            writeArray(List.of((Object[]) value), out, depth);
        } else {
            throw new IllegalArgumentException(
                    "Object of type " + value.getClass().getSimpleName() + " is not JSON serializable");
        }
    }

    private void writeObject(Map<?, ?> map, StringBuilder out, int depth) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
        if (sortKeys) {
            entries.sort((a, b) -> key(a.getKey()).compareTo(key(b.getKey())));
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : entries) {
            first = separate(first, out, depth + 1);
            quote(key(entry.getKey()), out);
            out.append(keySeparator);
            write(entry.getValue(), out, depth + 1);
        }
        newline(out, depth);
        out.append('}');
    }

    private void writeArray(Collection<?> items, StringBuilder out, int depth) {
        if (items.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        boolean first = true;
        for (Object item : items) {
            first = separate(first, out, depth + 1);
            write(item, out, depth + 1);
        }
        newline(out, depth);
        out.append(']');
    }

    private boolean separate(boolean first, StringBuilder out, int depth) {
        if (!first) {
            out.append(itemSeparator);
        }
        newline(out, depth);
        return false;
    }

    private void newline(StringBuilder out, int depth) {
        if (indent != null) {
            out.append('\n').append(indent.repeat(depth));
        }
    }

    /** Python's json converts keys that are not strings: numbers, booleans and None. */
    private static String key(Object key) {
        if (key == null) {
            return "null";
        }
        if (key instanceof Boolean) {
            return ((Boolean) key) ? "true" : "false";
        }
        if (key instanceof Double || key instanceof Float) {
            return floatRepr(((Number) key).doubleValue());
        }
        return key.toString();
    }

    private void quote(String text, StringBuilder out) {
        CanonicalJson.appendString(text, out, ensureAscii);
    }

    /**
     * Python's {@code repr(float)}: the shortest digits that read back as the same double, positional from 1e-4 up to
     * 1e16, else exponent form with at least two exponent digits ({@code 1e-05}, {@code 1e+16}). Java 17's
     * {@code Double.toString} is neither always shortest nor in that form.
     */
    static String floatRepr(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        if (value == 0) {
            return (1 / value < 0) ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(value);
        BigDecimal shortest = exact;
        for (int precision = 1; precision <= 17; precision++) {
            shortest = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (shortest.doubleValue() == value) {
                break;
            }
        }
        shortest = shortest.stripTrailingZeros();
        String digits = shortest.unscaledValue().abs().toString();
        int exponent = digits.length() - 1 - shortest.scale();
        String sign = value < 0 ? "-" : "";
        if (exponent >= -4 && exponent < 16) {
            return sign + positional(digits, exponent);
        }
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
    }

    private static String positional(String digits, int exponent) {
        if (exponent < 0) {
            return "0." + "0".repeat(-exponent - 1) + digits;
        }
        if (digits.length() <= exponent + 1) {
            return digits + "0".repeat(exponent + 1 - digits.length()) + ".0";
        }
        return digits.substring(0, exponent + 1) + "." + digits.substring(exponent + 1);
    }
}

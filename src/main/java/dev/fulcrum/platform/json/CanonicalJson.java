package dev.fulcrum.platform.json;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.io.schubfach.DoubleToDecimal;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * The JSON text Python's {@code json.dumps(value, sort_keys=True)} produces: keys sorted by code point, separators
 * {@code ", "} and {@code ": "}, non-ASCII escaped as {@code \\u} and four hex digits, integers as written, floats in
 * Python's shortest round-trip form ({@code 1e-05}, {@code 1e+16}, {@code 2.0}). Weave-compatible digests hash this
 * text.
 */
public final class CanonicalJson {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private CanonicalJson() {
    }

    public static String write(JsonNode value) {
        StringBuilder out = new StringBuilder(256);
        append(value, out, true);
        return out.toString();
    }

    /**
     * The same text with every object's keys in the order they came: what is stored and given back, so that a row or an
     * object reads as it was published while its digest is still that of {@link #write}.
     */
    public static String writeInOrder(JsonNode value) {
        StringBuilder out = new StringBuilder(256);
        append(value, out, false);
        return out.toString();
    }

    private static void append(JsonNode value, StringBuilder out, boolean sorted) {
        switch (value.getNodeType()) {
            case OBJECT -> appendObject(value, out, sorted);
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < value.size(); i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    append(value.get(i), out, sorted);
                }
                out.append(']');
            }
            case STRING -> appendString(value.textValue(), out);
            case NUMBER -> appendNumber(value, out);
            case BOOLEAN -> out.append(value.booleanValue() ? "true" : "false");
            case NULL, MISSING -> out.append("null");
            default -> throw new IllegalArgumentException("Not a JSON value: " + value.getNodeType());
        }
    }

    private static void appendObject(JsonNode object, StringBuilder out, boolean sorted) {
        List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(object.size());
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext();) {
            fields.add(it.next());
        }
        if (sorted) {
            fields.sort((a, b) -> compareCodePoints(a.getKey(), b.getKey()));
        }
        out.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                out.append(", ");
            }
            appendString(fields.get(i).getKey(), out);
            out.append(": ");
            append(fields.get(i).getValue(), out, sorted);
        }
        out.append('}');
    }

    /** Python compares str by code point; Java's compareTo by UTF-16 unit, which differs above U+FFFF. */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    static void appendString(String s, StringBuilder out) {
        appendString(s, out, true);
    }

    /**
     * A JSON string as Python's {@code json.dumps} writes it: the short escapes, other control characters as
     * six-character escapes, and with {@code asciiOnly} ({@code ensure_ascii}) DEL and every non-ASCII UTF-16 unit as
     * well.
     */
    public static void appendString(String s, StringBuilder out, boolean asciiOnly) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c >= 0x20 && (c <= 0x7e || !asciiOnly)) {
                        out.append(c);
                    } else {
                        out.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf])
                                .append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void appendNumber(JsonNode number, StringBuilder out) {
        if (number.isIntegralNumber()) {
            out.append(number.bigIntegerValue().toString());
        } else if (number.isBigDecimal()) {
            out.append(pythonFloat(number.decimalValue().doubleValue()));
        } else {
            out.append(pythonFloat(number.doubleValue()));
        }
    }

    /** Python's {@code repr(float)}. */
    public static String pythonFloat(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "Infinity" : "-Infinity";
        }
        if (v == 0) {
            return (1 / v < 0) ? "-0.0" : "0.0";
        }
        // shortest digits that round-trip, as Python's repr chooses them
        BigDecimal shortest = new BigDecimal(DoubleToDecimal.toString(Math.abs(v))).stripTrailingZeros();
        if (shortest.precision() == 2) {
            // Java's algorithm never answers with one digit where Python's may (5e-324, not 4.9e-324)
            BigDecimal one = shortest.round(new java.math.MathContext(1, java.math.RoundingMode.HALF_EVEN));
            if (one.doubleValue() == Math.abs(v)) {
                shortest = one.stripTrailingZeros();
            }
        }
        String digits = shortest.unscaledValue().toString();
        int exponent = digits.length() - 1 - shortest.scale(); // decimal exponent of the first digit
        StringBuilder out = new StringBuilder(24);
        if (v < 0) {
            out.append('-');
        }
        if (exponent < -4 || exponent >= 16) {
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits, 1, digits.length());
            }
            out.append('e').append(exponent < 0 ? '-' : '+');
            int abs = Math.abs(exponent);
            if (abs < 10) {
                out.append('0');
            }
            out.append(abs);
        } else if (exponent < 0) {
            out.append("0.");
            out.append("0".repeat(-exponent - 1));
            out.append(digits);
        } else if (digits.length() <= exponent + 1) {
            out.append(digits).append("0".repeat(exponent + 1 - digits.length())).append(".0");
        } else {
            out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
        }
        return out.toString();
    }
}

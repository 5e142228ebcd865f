package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;

/**
 * Reads JSON as a model writes it, possibly unfinished: where a value ends (or that it has not yet), the fields of an
 * object so far, a string's text so far. The formats read calls with it from answers that are still being generated, so
 * that arguments stream as they are written.
 */
final class JsonScan {

    /** Not ended yet: the text stops inside the value. */
    static final int OPEN = -1;
    /** Not JSON at this place. */
    static final int BROKEN = -2;

    private JsonScan() {
    }

    /** An object's field: its key, where its value starts and where it ends ({@link #OPEN} when it has not). */
    record Field(String key, int start, int end) {
    }

    /** An object's fields so far, whether it was closed, and where it ends ({@link #OPEN} when it has not). */
    record ObjectSoFar(List<Field> fields, int end) {

        Field field(String key) {
            for (Field field : fields) {
                if (field.key().equals(key)) {
                    return field;
                }
            }
            return null;
        }

        boolean closed() {
            return end >= 0;
        }
    }

    static int skipSpace(String text, int at) {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
        return at;
    }

    /**
     * Where the JSON value at {@code at} (after any whitespace) ends: the index after it, {@link #OPEN} when the text
     * stops inside it (a number at the very end is open, more digits may follow), {@link #BROKEN} when it is not JSON.
     */
    static int valueEnd(String text, int at) {
        at = skipSpace(text, at);
        if (at >= text.length()) {
            return OPEN;
        }
        char first = text.charAt(at);
        if (first == '"') {
            return stringEnd(text, at);
        }
        if (first == '{' || first == '[') {
            int depth = 0;
            for (int i = at; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c == '"') {
                    i = stringEnd(text, i);
                    if (i < 0) {
                        return OPEN;
                    }
                    i--;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                    if (depth == 0) {
                        return i + 1;
                    }
                }
            }
            return OPEN;
        }
        int end = at;
        while (end < text.length() && "-+.eE0123456789truefalsn".indexOf(text.charAt(end)) >= 0) {
            end++;
        }
        if (end == at) {
            return BROKEN;
        }
        return end == text.length() ? OPEN : end;
    }

    /** Where the string starting with the quote at {@code at} ends (after its closing quote), or {@link #OPEN}. */
    static int stringEnd(String text, int at) {
        for (int i = at + 1; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                return i + 1;
            }
        }
        return OPEN;
    }

    /**
     * The fields of the object whose {@code {} is at {@code at} (after any whitespace), as far as they were written; a
     * field whose key is not finished is not listed. Null when there is no object there or it is not JSON.
     */
    static ObjectSoFar object(String text, int at) {
        at = skipSpace(text, at);
        if (at >= text.length() || text.charAt(at) != '{') {
            return null;
        }
        List<Field> fields = new ArrayList<>();
        int i = skipSpace(text, at + 1);
        if (i < text.length() && text.charAt(i) == '}') {
            return new ObjectSoFar(fields, i + 1);
        }
        while (i < text.length()) {
            if (text.charAt(i) != '"') {
                return null;
            }
            int keyEnd = stringEnd(text, i);
            if (keyEnd < 0) {
                break;
            }
            String key = decode(text.substring(i, keyEnd));
            if (key == null) {
                return null;
            }
            int colon = skipSpace(text, keyEnd);
            if (colon >= text.length()) {
                break;
            }
            if (text.charAt(colon) != ':') {
                return null;
            }
            int start = skipSpace(text, colon + 1);
            if (start >= text.length()) {
                break;
            }
            int end = valueEnd(text, start);
            if (end == BROKEN) {
                return null;
            }
            fields.add(new Field(key, start, end));
            if (end == OPEN) {
                break;
            }
            int next = skipSpace(text, end);
            if (next >= text.length()) {
                break;
            }
            if (text.charAt(next) == '}') {
                return new ObjectSoFar(fields, next + 1);
            }
            if (text.charAt(next) != ',') {
                return null;
            }
            i = skipSpace(text, next + 1);
        }
        return new ObjectSoFar(fields, OPEN);
    }

    /** A complete JSON string literal's text, or null when it is not one. */
    static String decode(String literal) {
        try {
            return Json.decodeValue(literal) instanceof String text ? text : null;
        } catch (DecodeException e) {
            return null;
        }
    }

    /**
     * The text of the string literal starting with the quote at {@code at}, as far as it was written: escapes that are
     * not finished are left out, so the text only grows as more is written.
     */
    static String stringSoFar(String text, int at) {
        int end = stringEnd(text, at);
        if (end >= 0) {
            return decode(text.substring(at, end));
        }
        StringBuilder out = new StringBuilder();
        int i = at + 1;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c != '\\') {
                out.append(c);
                i++;
                continue;
            }
            if (i + 1 >= text.length()) {
                break;
            }
            char escaped = text.charAt(i + 1);
            if (escaped == 'u') {
                if (i + 6 > text.length()) {
                    break;
                }
                try {
                    out.append((char) Integer.parseInt(text.substring(i + 2, i + 6), 16));
                } catch (NumberFormatException e) {
                    return out.toString();
                }
                i += 6;
                continue;
            }
            int index = "\"\\/bfnrt".indexOf(escaped);
            if (index < 0) {
                return out.toString();
            }
            out.append("\"\\/\b\f\n\r\t".charAt(index));
            i += 2;
        }
        // a high surrogate waits for its low one
        if (!out.isEmpty() && Character.isHighSurrogate(out.charAt(out.length() - 1))) {
            out.setLength(out.length() - 1);
        }
        return out.toString();
    }
}

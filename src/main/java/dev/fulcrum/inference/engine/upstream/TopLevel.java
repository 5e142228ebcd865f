package dev.fulcrum.inference.engine.upstream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import io.vertx.core.buffer.Buffer;

import dev.fulcrum.inference.JsonString;

/**
 * One pass over a JSON object's bytes without building a tree: where its top-level {@code model} string is, and the
 * token counts of its top-level {@code usage} when it has them. The gateway uses it to replace the model id in a
 * request or an answer as bytes, leaving every other byte as the sender wrote it.
 * <p>
 * It runs on every request and answer of the gateway, so the usual document (strict JSON in UTF-8, no escapes in the
 * names it looks for, small integer counts) is read by {@link Outline}, a validating scanner written for exactly this
 * that builds neither a tree nor a string; whatever it is not sure of (anything else, valid or not) is read again by
 * Jackson's parser, whose answer stands. The outline only ever answers what Jackson would ({@code TopLevelTest}
 * compares them).
 *
 * @param modelStart
 *            offset of the model string's opening quote
 * @param modelEnd
 *            offset just after its closing quote
 * @param promptTokens
 *            {@code usage.prompt_tokens}, or -1 when there is no usage with an integer count
 * @param completionTokens
 *            {@code usage.completion_tokens} (0 when absent)
 */
record TopLevel(int modelStart, int modelEnd, int promptTokens, int completionTokens) {

    /**
     * Scans {@code bytes}; {@code null} when they are not exactly one JSON object with one top-level {@code model}
     * string (the caller then works on a tree, which handles every other case).
     *
     * @throws IOException
     *             when the bytes are not valid JSON
     */
    static TopLevel scan(JsonFactory factory, byte[] bytes) throws IOException {
        TopLevel outlined = Outline.of(bytes);
        return outlined != null ? outlined : parsed(factory, bytes);
    }

    /** {@link #scan} by Jackson's parser alone: the answer for every document. */
    static TopLevel parsed(JsonFactory factory, byte[] bytes) throws IOException {
        try (JsonParser parser = factory.createParser(bytes)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            int modelStart = -1;
            int modelEnd = -1;
            int prompt = -1;
            int completion = 0;
            boolean usage = false;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (name.equals("model")) {
                    if (modelStart >= 0 || value != JsonToken.VALUE_STRING) {
                        return null;
                    }
                    modelStart = (int) parser.currentTokenLocation().getByteOffset();
                    parser.finishToken();
                    modelEnd = (int) parser.currentLocation().getByteOffset();
                } else if (name.equals("usage") && value == JsonToken.START_OBJECT) {
                    if (usage) {
                        return null;
                    }
                    usage = true;
                    while (parser.nextToken() == JsonToken.FIELD_NAME) {
                        String count = parser.currentName();
                        JsonToken number = parser.nextToken();
                        boolean integer = number == JsonToken.VALUE_NUMBER_INT
                                && parser.getNumberType() == JsonParser.NumberType.INT;
                        if (count.equals("prompt_tokens")) {
                            prompt = integer ? parser.getIntValue() : -1;
                        } else if (count.equals("completion_tokens")) {
                            completion = integer ? parser.getIntValue() : 0;
                        } else {
                            parser.skipChildren();
                        }
                    }
                } else {
                    parser.skipChildren();
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null || modelStart < 0
                    || bytes[modelStart] != '"' || bytes[modelEnd - 1] != '"') {
                return null;
            }
            return new TopLevel(modelStart, modelEnd, prompt, completion);
        }
    }

    boolean hasUsage() {
        return promptTokens >= 0;
    }

    /** {@code bytes} with the model string replaced by {@code model}. */
    Buffer withModel(byte[] bytes, String model) {
        return withModelLiteral(bytes, JsonString.quote(model).getBytes(StandardCharsets.UTF_8));
    }

    /** {@code bytes} with the model string replaced by a JSON string literal in UTF-8 (quotes included). */
    Buffer withModelLiteral(byte[] bytes, byte[] literal) {
        return Buffer.buffer(bytes.length - (modelEnd - modelStart) + literal.length).appendBytes(bytes, 0, modelStart)
                .appendBytes(literal).appendBytes(bytes, modelEnd, bytes.length - modelEnd);
    }

    /**
     * The scanner for the usual document: strict JSON (RFC 8259) in strict UTF-8, one top-level object with one
     * {@code model} string, no escape in a name it compares, counts of at most nine digits, nesting of at most
     * {@value #MAX_DEPTH}. {@link #of} gives null for anything else, valid or not, and then {@link #parsed} decides.
     */
    static final class Outline {

        private static final int MAX_DEPTH = 256;
        private static final int MAX_NUMBER = 100;
        private static final byte[] MODEL = name("model");
        private static final byte[] USAGE = name("usage");
        private static final byte[] PROMPT_TOKENS = name("prompt_tokens");
        private static final byte[] COMPLETION_TOKENS = name("completion_tokens");

        /** Thrown for whatever the outline is not sure of; without a stack trace, so it costs little. */
        private static final RuntimeException UNSURE = new RuntimeException("not a usual document", null, false,
                false) {
        };

        private final byte[] bytes;
        private int at;
        /** Whether the string read last had an escape. */
        private boolean escaped;

        private Outline(byte[] bytes) {
            this.bytes = bytes;
        }

        /** The document's {@link TopLevel}, or null when Jackson's parser must decide. */
        static TopLevel of(byte[] bytes) {
            try {
                return new Outline(bytes).document();
            } catch (RuntimeException unsure) {
                if (unsure != UNSURE) {
                    throw unsure;
                }
                return null;
            }
        }

        private TopLevel document() {
            expect('{');
            int modelStart = -1;
            int modelEnd = -1;
            int prompt = -1;
            int completion = 0;
            boolean usage = false;
            if (next() == '}') {
                throw UNSURE; // no model
            }
            do {
                int name = nameEnd();
                int value = next();
                if (equals(name, MODEL)) {
                    if (modelStart >= 0 || value != '"') {
                        throw UNSURE;
                    }
                    modelStart = at;
                    string();
                    modelEnd = at;
                } else if (equals(name, USAGE) && value == '{') {
                    if (usage) {
                        throw UNSURE;
                    }
                    usage = true;
                    at++;
                    if (next() == '}') {
                        at++;
                        continue; // to the next top-level member
                    }
                    do {
                        int count = nameEnd();
                        next();
                        int start = at;
                        value(1);
                        if (equals(count, PROMPT_TOKENS)) {
                            prompt = integer(start, -1);
                        } else if (equals(count, COMPLETION_TOKENS)) {
                            completion = integer(start, 0);
                        }
                    } while (more('}'));
                } else {
                    value(1);
                }
            } while (more('}'));
            if (next() != -1 || modelStart < 0) {
                throw UNSURE;
            }
            return new TopLevel(modelStart, modelEnd, prompt, completion);
        }

        /** The next byte that is not JSON whitespace, not consumed; -1 at the end. */
        private int next() {
            while (at < bytes.length) {
                int c = bytes[at] & 0xff;
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                    return c;
                }
                at++;
            }
            return -1;
        }

        private void expect(char c) {
            if (next() != c) {
                throw UNSURE;
            }
            at++;
        }

        /** After a member: true past a comma, false past {@code close}. */
        private boolean more(char close) {
            int c = next();
            at++;
            if (c == ',') {
                return true;
            }
            if (c != close) {
                throw UNSURE;
            }
            return false;
        }

        /** Reads a member's name and its colon; returns the offset just after the name's closing quote. */
        private int nameEnd() {
            if (next() != '"') {
                throw UNSURE;
            }
            string();
            if (escaped) {
                throw UNSURE; // its meaning is Jackson's to decode
            }
            int end = at;
            expect(':');
            return end;
        }

        /** Whether the name that ended at {@code end} (its closing quote's next offset) is {@code name}. */
        private boolean equals(int end, byte[] name) {
            return end >= name.length && Arrays.equals(bytes, end - name.length, end, name, 0, name.length);
        }

        private void value(int depth) {
            int c = next();
            if (c == '"') {
                string();
            } else if (c == '{') {
                container(depth, '}', true);
            } else if (c == '[') {
                container(depth, ']', false);
            } else if (c == 't') {
                literal("true");
            } else if (c == 'f') {
                literal("false");
            } else if (c == 'n') {
                literal("null");
            } else {
                number();
            }
        }

        private void container(int depth, char close, boolean object) {
            if (depth >= MAX_DEPTH) {
                throw UNSURE;
            }
            at++;
            if (next() == close) {
                at++;
                return;
            }
            do {
                if (object) {
                    if (next() != '"') {
                        throw UNSURE;
                    }
                    string();
                    expect(':');
                }
                value(depth + 1);
            } while (more(close));
        }

        private void literal(String word) {
            if (at + word.length() > bytes.length) {
                throw UNSURE;
            }
            for (int i = 0; i < word.length(); i++) {
                if (bytes[at + i] != word.charAt(i)) {
                    throw UNSURE;
                }
            }
            at += word.length();
        }

        private void number() {
            int start = at;
            if (at < bytes.length && bytes[at] == '-') {
                at++;
            }
            if (at < bytes.length && bytes[at] == '0') {
                at++;
            } else if (digits() == 0) {
                throw UNSURE;
            }
            if (at < bytes.length && bytes[at] == '.') {
                at++;
                if (digits() == 0) {
                    throw UNSURE;
                }
            }
            if (at < bytes.length && (bytes[at] == 'e' || bytes[at] == 'E')) {
                at++;
                if (at < bytes.length && (bytes[at] == '+' || bytes[at] == '-')) {
                    at++;
                }
                if (digits() == 0) {
                    throw UNSURE;
                }
            }
            if (at - start > MAX_NUMBER) {
                throw UNSURE;
            }
        }

        private int digits() {
            int start = at;
            while (at < bytes.length && bytes[at] >= '0' && bytes[at] <= '9') {
                at++;
            }
            return at - start;
        }

        /**
         * A count read by Jackson's rule (an integer that fits an int, else {@code otherwise}): the value between
         * {@code start} and the current offset. Ten digits and more are Jackson's to decide.
         */
        private int integer(int start, int otherwise) {
            int i = start;
            boolean negative = bytes[i] == '-';
            if (negative) {
                i++;
            }
            if (i == at || bytes[i] < '0' || bytes[i] > '9') {
                if (bytes[start] == '{' || bytes[start] == '[') {
                    throw UNSURE; // Jackson's scan does not step over a container here
                }
                return otherwise;
            }
            int value = 0;
            int end = i;
            while (end < at && bytes[end] >= '0' && bytes[end] <= '9') {
                value = value * 10 + (bytes[end] - '0');
                end++;
            }
            if (end < at) {
                return otherwise; // a fraction or an exponent: not an integer
            }
            if (end - i > 9) {
                throw UNSURE;
            }
            return negative ? -value : value;
        }

        /** Reads a string from its opening quote to just past its closing one, checking escapes and UTF-8. */
        private void string() {
            escaped = false;
            at++;
            while (at < bytes.length) {
                int c = bytes[at] & 0xff;
                if (c == '"') {
                    at++;
                    return;
                }
                if (c == '\\') {
                    escaped = true;
                    escape();
                } else if (c < 0x20) {
                    throw UNSURE;
                } else if (c < 0x80) {
                    at++;
                } else {
                    utf8(c);
                }
            }
            throw UNSURE;
        }

        private void escape() {
            if (at + 1 >= bytes.length) {
                throw UNSURE;
            }
            byte c = bytes[at + 1];
            if (c == 'u') {
                if (at + 6 > bytes.length) {
                    throw UNSURE;
                }
                for (int i = at + 2; i < at + 6; i++) {
                    if (Character.digit(bytes[i], 16) < 0) {
                        throw UNSURE;
                    }
                }
                at += 6;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
                at += 2;
            } else {
                throw UNSURE;
            }
        }

        /**
         * One well-formed UTF-8 sequence starting with {@code lead} (no overlong forms, surrogates or beyond U+10FFFF).
         */
        private void utf8(int lead) {
            int length;
            int low = 0x80;
            int high = 0xbf;
            if (lead >= 0xc2 && lead <= 0xdf) {
                length = 2;
            } else if (lead >= 0xe0 && lead <= 0xef) {
                length = 3;
                low = lead == 0xe0 ? 0xa0 : 0x80;
                high = lead == 0xed ? 0x9f : 0xbf;
            } else if (lead >= 0xf0 && lead <= 0xf4) {
                length = 4;
                low = lead == 0xf0 ? 0x90 : 0x80;
                high = lead == 0xf4 ? 0x8f : 0xbf;
            } else {
                throw UNSURE;
            }
            if (at + length > bytes.length) {
                throw UNSURE;
            }
            int second = bytes[at + 1] & 0xff;
            if (second < low || second > high) {
                throw UNSURE;
            }
            for (int i = at + 2; i < at + length; i++) {
                int c = bytes[i] & 0xff;
                if (c < 0x80 || c > 0xbf) {
                    throw UNSURE;
                }
            }
            at += length;
        }

        private static byte[] name(String name) {
            return ("\"" + name + "\"").getBytes(StandardCharsets.US_ASCII);
        }
    }
}

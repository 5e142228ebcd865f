package dev.fulcrum.inference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import io.vertx.core.buffer.Buffer;

/**
 * One pass over a JSON object's bytes without building a tree: where its top-level {@code model} string is, and the
 * token counts of its top-level {@code usage} when it has them. The gateway uses it to replace the model id in a
 * request or an answer as bytes, leaving every other byte as the sender wrote it.
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
}

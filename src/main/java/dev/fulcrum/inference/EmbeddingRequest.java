package dev.fulcrum.inference;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A checked embeddings request ({@code POST /v1/embeddings}). The body is kept as sent for an upstream.
 *
 * @param texts
 *            the inputs as strings, or null when given as tokens (an integer array or an array of them)
 * @param tokenInputs
 *            the inputs as token ids (one array per input), or null when given as strings
 * @param base64
 *            {@code encoding_format} is {@code base64} (else {@code float})
 * @param dimensions
 *            {@code dimensions} as asked, or null
 */
public record EmbeddingRequest(ObjectNode body, byte[] bytes, String model, List<String> texts, List<int[]> tokenInputs,
        boolean base64, Integer dimensions) {

    /** The most inputs of one request, as OpenAI allows. */
    public static final int MAX_INPUTS = 2048;

    public static EmbeddingRequest parse(ObjectMapper json, byte[] bytes) {
        ObjectNode body = ChatRequest.object(json, bytes);
        String model = ChatRequest.model(body);
        List<String> texts = texts(body.get("input"));
        List<int[]> tokenInputs = texts == null ? TextCompletionRequest.tokenArrays(body.get("input")) : null;
        boolean base64 = false;
        JsonNode format = body.get("encoding_format");
        if (format != null && !format.isNull()) {
            if (!format.isTextual() || !(format.asText().equals("float") || format.asText().equals("base64"))) {
                throw InferenceFailure.invalid("encoding_format", "'encoding_format' must be 'float' or 'base64'");
            }
            base64 = format.asText().equals("base64");
        }
        Integer dimensions = ChatRequest.integer(body, "dimensions", 1, Integer.MAX_VALUE);
        JsonNode user = body.get("user");
        if (user != null && !user.isNull() && !user.isTextual()) {
            throw InferenceFailure.invalid("user", "'user' must be a string");
        }
        return new EmbeddingRequest(body, bytes, model, texts, tokenInputs, base64, dimensions);
    }

    /** How many inputs the request has: strings or token arrays. */
    public int inputCount() {
        return texts != null ? texts.size() : tokenInputs.size();
    }

    private static List<String> texts(JsonNode input) {
        String shape = "'input' must be a non-empty string, an array of 1 to " + MAX_INPUTS
                + " non-empty strings, an array of tokens or an array of token arrays";
        if (input == null || input.isNull()) {
            throw InferenceFailure.invalid("input", "You must provide an input parameter");
        }
        if (input.isTextual()) {
            if (input.asText().isEmpty()) {
                throw InferenceFailure.invalid("input", shape);
            }
            return List.of(input.asText());
        }
        if (!input.isArray() || input.isEmpty() || input.size() > MAX_INPUTS) {
            throw InferenceFailure.invalid("input", shape);
        }
        if (input.get(0).isTextual()) {
            List<String> texts = new ArrayList<>(input.size());
            for (JsonNode item : input) {
                if (!item.isTextual() || item.asText().isEmpty()) {
                    throw InferenceFailure.invalid("input", shape);
                }
                texts.add(item.asText());
            }
            return texts;
        }
        boolean flat = input.get(0).isIntegralNumber();
        for (JsonNode item : input) {
            boolean ok = flat ? item.isIntegralNumber()
                    : item.isArray() && !item.isEmpty() && TextCompletionRequest.allIntegers(item);
            if (!ok) {
                throw InferenceFailure.invalid("input", shape);
            }
        }
        return null;
    }
}

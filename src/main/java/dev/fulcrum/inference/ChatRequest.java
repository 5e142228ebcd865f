package dev.fulcrum.inference;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A checked chat completion request. The body is kept as sent (an upstream receives every field, known or not); the
 * fields every backend relies on are checked here, each failure a 400 naming the field in {@code param}.
 *
 * @param body
 *            the request as a tree
 * @param bytes
 *            the request exactly as sent (a gateway backend may forward it with only {@code model} replaced)
 */
public record ChatRequest(ObjectNode body, byte[] bytes, String model, ArrayNode messages, boolean stream,
        boolean includeUsage, int n, Integer maxTokens, Double temperature, Double topP, List<String> stop, Long seed,
        Derived derived) {

    /**
     * What an engine derives from the request (its prompt's parts, the grammar of its answer), worked out once: the
     * check on the event loop and the generation after it read the same value.
     */
    public static final class Derived {

        private final Map<Object, Object> values = new ConcurrentHashMap<>(4);

        /** The value under {@code key}, computed by {@code compute} the first time (nothing is kept when it throws). */
        @SuppressWarnings("unchecked")
        public <T> T get(Object key, Supplier<T> compute) {
            Object value = values.get(key);
            if (value == null) {
                value = compute.get();
                Object earlier = values.putIfAbsent(key, value);
                if (earlier != null) {
                    value = earlier;
                }
            }
            return (T) value;
        }
    }

    private static final int MAX_N = 128;

    public static ChatRequest parse(ObjectMapper json, byte[] bytes) {
        ObjectNode body = object(json, bytes);
        String model = model(body);
        ArrayNode messages = messages(body.get("messages"));
        number(body, "temperature", 0, 2);
        number(body, "top_p", 0, 1);
        number(body, "presence_penalty", -2, 2);
        number(body, "frequency_penalty", -2, 2);
        Integer maxTokens = integer(body, "max_tokens", 1, Integer.MAX_VALUE);
        Integer maxCompletionTokens = integer(body, "max_completion_tokens", 1, Integer.MAX_VALUE);
        Integer n = integer(body, "n", 1, MAX_N);
        integer(body, "top_logprobs", 0, 20);
        Long seed = seed(body);
        boolean stream = bool(body, "stream");
        bool(body, "logprobs");
        bool(body, "parallel_tool_calls");
        boolean includeUsage = includeUsage(body, stream);
        JsonNode format = body.get("response_format");
        if (format != null && !format.isNull() && !(format.isObject() && format.path("type").isTextual())) {
            throw InferenceFailure.invalid("response_format", "'response_format' must be an object with a 'type'");
        }
        JsonNode tools = body.get("tools");
        if (tools != null && !tools.isNull() && !tools.isArray()) {
            throw InferenceFailure.invalid("tools", "'tools' must be an array");
        }
        JsonNode toolChoice = body.get("tool_choice");
        if (toolChoice != null && !toolChoice.isNull() && !toolChoice.isTextual() && !toolChoice.isObject()) {
            throw InferenceFailure.invalid("tool_choice", "'tool_choice' must be a string or an object");
        }
        for (String field : List.of("metadata", "logit_bias")) {
            JsonNode value = body.get(field);
            if (value != null && !value.isNull() && !value.isObject()) {
                throw InferenceFailure.invalid(field, "'" + field + "' must be an object");
            }
        }
        JsonNode user = body.get("user");
        if (user != null && !user.isNull() && !user.isTextual()) {
            throw InferenceFailure.invalid("user", "'user' must be a string");
        }
        return new ChatRequest(body, bytes, model, messages, stream, includeUsage, n == null ? 1 : n,
                maxCompletionTokens != null ? maxCompletionTokens : maxTokens, doubleOf(body, "temperature"),
                doubleOf(body, "top_p"), stop(body.get("stop")), seed, new Derived());
    }

    /** {@code seed}: an integer or absent. */
    static Long seed(ObjectNode body) {
        JsonNode seed = body.get("seed");
        if (seed == null || seed.isNull()) {
            return null;
        }
        if (!seed.canConvertToLong() || !wholeNumber(seed)) {
            throw InferenceFailure.invalid("seed", "'seed' must be an integer");
        }
        return seed.asLong();
    }

    /**
     * Whether {@code value} is an integer as JSON Schema's {@code integer} means it: any number without a fractional
     * part ({@code 2.0} too, as OpenAI's API and Python's {@code json} take it).
     */
    public static boolean wholeNumber(JsonNode value) {
        return value.isIntegralNumber() || value.isFloatingPointNumber() && Double.isFinite(value.asDouble())
                && value.asDouble() == Math.rint(value.asDouble());
    }

    /** {@code stream_options.include_usage}, allowed only on a stream. */
    static boolean includeUsage(ObjectNode body, boolean stream) {
        JsonNode options = body.get("stream_options");
        if (options == null || options.isNull()) {
            return false;
        }
        if (!options.isObject()) {
            throw InferenceFailure.invalid("stream_options", "'stream_options' must be an object");
        }
        if (!stream) {
            throw InferenceFailure.invalid("stream_options",
                    "The 'stream_options' parameter is only allowed when 'stream' is enabled");
        }
        return bool((ObjectNode) options, "include_usage", "stream_options.include_usage");
    }

    /** The request body as a JSON object; anything else is a 400. */
    static ObjectNode object(ObjectMapper json, byte[] bytes) {
        JsonNode root;
        try {
            root = json.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw InferenceFailure.invalid(null,
                    "We could not parse the JSON body of your request: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw InferenceFailure.invalid(null, "We could not read the JSON body of your request");
        }
        if (!(root instanceof ObjectNode body)) {
            throw InferenceFailure.invalid(null, "The request body must be a JSON object");
        }
        return body;
    }

    /** The request's {@code model}: a non-empty string, else a 400 naming it. */
    static String model(ObjectNode body) {
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            throw InferenceFailure.invalid("model", "You must provide a model parameter");
        }
        if (!model.isTextual() || model.asText().isEmpty()) {
            throw InferenceFailure.invalid("model", "'model' must be a non-empty string");
        }
        return model.asText();
    }

    /** The field {@link #maxTokens()} comes from: {@code max_completion_tokens} when given, else {@code max_tokens}. */
    public String maxTokensParam() {
        return has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    }

    /** Whether a field is present with a value other than null. */
    public boolean has(String field) {
        JsonNode value = body.get(field);
        return value != null && !value.isNull();
    }

    private static ArrayNode messages(JsonNode node) {
        if (node == null || node.isNull()) {
            throw InferenceFailure.invalid("messages", "You must provide a messages parameter");
        }
        if (!(node instanceof ArrayNode messages) || messages.isEmpty()) {
            throw InferenceFailure.invalid("messages", "'messages' must be a non-empty array");
        }
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String at = "messages[" + i + "]";
            if (!message.isObject()) {
                throw InferenceFailure.invalid(at, "'" + at + "' must be an object");
            }
            if (!message.path("role").isTextual()) {
                throw InferenceFailure.invalid(at + ".role", "'" + at + ".role' must be a string");
            }
            JsonNode content = message.get("content");
            if (content != null && !content.isNull() && !content.isTextual() && !content.isArray()) {
                throw InferenceFailure.invalid(at + ".content",
                        "'" + at + ".content' must be a string or an array of content parts");
            }
        }
        return messages;
    }

    static List<String> stop(JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (node.isTextual()) {
            return List.of(node.asText());
        }
        if (node.isArray() && node.size() <= 4) {
            List<String> stop = new ArrayList<>();
            for (JsonNode item : node) {
                if (!item.isTextual()) {
                    throw InferenceFailure.invalid("stop", "'stop' must be a string or an array of strings");
                }
                stop.add(item.asText());
            }
            return List.copyOf(stop);
        }
        throw InferenceFailure.invalid("stop", "'stop' must be a string or an array of at most 4 strings");
    }

    static void number(ObjectNode body, String field, double min, double max) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return;
        }
        if (!value.isNumber() || value.asDouble() < min || value.asDouble() > max) {
            throw InferenceFailure.invalid(field,
                    "'" + field + "' must be a number from " + trim(min) + " to " + trim(max));
        }
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    static Double doubleOf(ObjectNode body, String field) {
        JsonNode value = body.get(field);
        return value == null || value.isNull() ? null : value.asDouble();
    }

    static Integer integer(ObjectNode body, String field, int min, int max) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!wholeNumber(value) || !value.canConvertToInt() || value.asInt() < min || value.asInt() > max) {
            throw InferenceFailure.invalid(field, "'" + field + "' must be an integer from " + min
                    + (max == Integer.MAX_VALUE ? " up" : " to " + max));
        }
        return value.asInt();
    }

    static boolean bool(ObjectNode body, String field) {
        return bool(body, field, field);
    }

    static boolean bool(ObjectNode body, String field, String param) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return false;
        }
        if (!value.isBoolean()) {
            throw InferenceFailure.invalid(param, "'" + param + "' must be a boolean");
        }
        return value.asBoolean();
    }
}

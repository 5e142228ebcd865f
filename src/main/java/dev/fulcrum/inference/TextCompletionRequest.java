package dev.fulcrum.inference;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A checked text completion request ({@code POST /v1/completions}, OpenAI's legacy completions API). The body is kept
 * as sent for an upstream; the common fields are checked here, each failure a 400 naming the field.
 *
 * @param prompts
 *            the prompt as strings (one per prompt), or null when it is given as tokens
 * @param tokenPrompts
 *            the prompt as token ids (one array per prompt), or null when it is given as strings
 * @param maxTokens
 *            {@code max_tokens} as asked, or null (OpenAI's default is 16)
 * @param logprobs
 *            {@code logprobs} (0 to 5), or null
 */
public record TextCompletionRequest(ObjectNode body, byte[] bytes, String model, List<String> prompts,
        List<int[]> tokenPrompts, boolean stream, boolean includeUsage, int n, Integer maxTokens, Double temperature,
        Double topP, List<String> stop, Long seed, boolean echo, Integer logprobs, String suffix) {

    /** OpenAI's default {@code max_tokens} for text completions. */
    public static final int DEFAULT_MAX_TOKENS = 16;

    private static final int MAX_N = 128;

    public static TextCompletionRequest parse(ObjectMapper json, byte[] bytes) {
        ObjectNode body = ChatRequest.object(json, bytes);
        String model = ChatRequest.model(body);
        List<String> prompts = prompts(body.get("prompt"));
        List<int[]> tokenPrompts = prompts == null ? tokenArrays(body.get("prompt")) : null;
        ChatRequest.number(body, "temperature", 0, 2);
        ChatRequest.number(body, "top_p", 0, 1);
        ChatRequest.number(body, "presence_penalty", -2, 2);
        ChatRequest.number(body, "frequency_penalty", -2, 2);
        Integer maxTokens = ChatRequest.integer(body, "max_tokens", 0, Integer.MAX_VALUE);
        Integer n = ChatRequest.integer(body, "n", 1, MAX_N);
        Integer bestOf = ChatRequest.integer(body, "best_of", 1, 20);
        if (bestOf != null && bestOf < (n == null ? 1 : n)) {
            throw InferenceFailure.invalid("best_of", "'best_of' must be at least 'n'");
        }
        Integer logprobs = ChatRequest.integer(body, "logprobs", 0, 5);
        boolean stream = ChatRequest.bool(body, "stream");
        boolean echo = ChatRequest.bool(body, "echo");
        boolean includeUsage = ChatRequest.includeUsage(body, stream);
        JsonNode suffix = body.get("suffix");
        if (suffix != null && !suffix.isNull() && !suffix.isTextual()) {
            throw InferenceFailure.invalid("suffix", "'suffix' must be a string");
        }
        JsonNode logitBias = body.get("logit_bias");
        if (logitBias != null && !logitBias.isNull() && !logitBias.isObject()) {
            throw InferenceFailure.invalid("logit_bias", "'logit_bias' must be an object");
        }
        JsonNode user = body.get("user");
        if (user != null && !user.isNull() && !user.isTextual()) {
            throw InferenceFailure.invalid("user", "'user' must be a string");
        }
        return new TextCompletionRequest(body, bytes, model, prompts, tokenPrompts, stream, includeUsage,
                n == null ? 1 : n, maxTokens, ChatRequest.doubleOf(body, "temperature"),
                ChatRequest.doubleOf(body, "top_p"), ChatRequest.stop(body.get("stop")), ChatRequest.seed(body), echo,
                logprobs, suffix == null || suffix.isNull() ? null : suffix.asText());
    }

    /**
     * Strings, or null for tokens (an integer array or an array of them); anything else is a 400. A null prompt is
     * OpenAI's default: the beginning of a new document, which is the empty prompt (the engine's start token alone).
     */
    private static List<String> prompts(JsonNode prompt) {
        if (prompt == null) {
            throw InferenceFailure.invalid("prompt", "You must provide a prompt parameter");
        }
        if (prompt.isNull()) {
            return List.of("");
        }
        if (prompt.isTextual()) {
            return List.of(prompt.asText());
        }
        if (!prompt.isArray() || prompt.isEmpty()) {
            throw InferenceFailure.invalid("prompt",
                    "'prompt' must be a string, an array of strings, an array of tokens or an array of token arrays");
        }
        if (prompt.get(0).isTextual()) {
            List<String> prompts = new ArrayList<>();
            for (JsonNode item : prompt) {
                if (!item.isTextual()) {
                    throw InferenceFailure.invalid("prompt", "'prompt' must not mix strings and tokens");
                }
                prompts.add(item.asText());
            }
            return List.copyOf(prompts);
        }
        for (JsonNode item : prompt) {
            boolean tokens = item.isIntegralNumber()
                    || item.isArray() && !item.isEmpty() && allIntegers(item) && prompt.get(0).isArray();
            if (!tokens || item.isIntegralNumber() != prompt.get(0).isIntegralNumber()) {
                throw InferenceFailure.invalid("prompt",
                        "'prompt' must be a string, an array of strings, an array of tokens or an array of token arrays");
            }
        }
        return null;
    }

    /** A checked array of tokens, or of token arrays, as one array per prompt (or input). */
    static List<int[]> tokenArrays(JsonNode tokens) {
        List<int[]> arrays = new ArrayList<>();
        if (tokens.get(0).isIntegralNumber()) {
            arrays.add(ids(tokens));
        } else {
            for (JsonNode array : tokens) {
                arrays.add(ids(array));
            }
        }
        return List.copyOf(arrays);
    }

    private static int[] ids(JsonNode array) {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            // a token id beyond any vocabulary is not one (a model's own range is its engine's check)
            ids[i] = array.get(i).canConvertToInt() ? array.get(i).asInt() : -1;
        }
        return ids;
    }

    /** How many prompts the request has: strings or token arrays. */
    public int promptCount() {
        return prompts != null ? prompts.size() : tokenPrompts.size();
    }

    static boolean allIntegers(JsonNode array) {
        for (JsonNode item : array) {
            if (!item.isIntegralNumber()) {
                return false;
            }
        }
        return true;
    }

    /** Tokens a choice may generate: as asked, else OpenAI's default of 16. */
    public int maxTokensOrDefault() {
        return maxTokens != null ? maxTokens : DEFAULT_MAX_TOKENS;
    }
}

package dev.fulcrum.tinker;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.inference.TokenSampler;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * What a sample answers of its prompt: the checks of {@code prompt_logprobs_last_n} and {@code target_prompt_logprobs}
 * (SDK 0.3x), and the result's {@code prompt_logprobs}, {@code topk_prompt_logprobs} (null before the last N positions,
 * whichever backend scored them) and {@code target_prompt_logprobs}.
 */
final class TinkerPromptScores {

    /** The most target token ids asked at one prompt position (the tensor's second dimension). */
    static final int MAX_TARGETS = 64;
    static final String LAST_N = "prompt_logprobs_last_n";
    static final String TARGETS = "target_prompt_logprobs";

    private TinkerPromptScores() {
    }

    /** The last N prompt positions to score: 1 to the prompt's length - 1, with prompt logprobs asked; else null. */
    static Integer lastN(JsonNode body, int length, boolean promptLogprobs, int topk) {
        JsonNode value = body.get(LAST_N);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || value.asLong() < 1 || value.asLong() > length - 1) {
            throw ApiException.invalid(Violation.of(
                    length < 2 ? "The prompt has one token: no position to score"
                            : "Must be an integer from 1 to " + (length - 1) + " (the prompt's length - 1)",
                    "value_error", "body", LAST_N));
        }
        if (!promptLogprobs && topk == 0) {
            throw ApiException
                    .invalid(Violation.of("Applies to prompt logprobs: set prompt_logprobs or topk_prompt_logprobs",
                            "value_error", "body", LAST_N));
        }
        return value.asInt();
    }

    /**
     * The target ids: a dense int64 TensorData of shape {@code [length - 1, K]} (K from 1 to {@link #MAX_TARGETS}),
     * each a token id or -1, at least one id; else null when absent.
     */
    static int[][] targets(JsonNode body, int length) {
        JsonNode tensor = body.get(TARGETS);
        if (tensor == null || tensor.isNull()) {
            return null;
        }
        if (!tensor.isObject() || !tensor.path("data").isArray()) {
            throw invalid("Must be a TensorData {data, dtype, shape}", "dict_type");
        }
        if (tensor.hasNonNull("sparse_crow_indices") || tensor.hasNonNull("sparse_col_indices")) {
            throw invalid("A sparse (CSR) target_prompt_logprobs is not served: send it dense, -1 in the cells that "
                    + "ask nothing", "value_error");
        }
        if (!tensor.path("dtype").asText("").equals("int64")) {
            throw invalid("Must be an int64 tensor of token ids", "value_error");
        }
        JsonNode shape = tensor.path("shape");
        long columns = shape.path(1).isIntegralNumber() ? shape.path(1).asLong() : 0;
        if (!shape.isArray() || shape.size() != 2 || !shape.get(0).isIntegralNumber()
                || shape.get(0).asLong() != length - 1 || columns < 1 || columns > MAX_TARGETS) {
            throw invalid(
                    "Must have the shape [len(prompt) - 1, K] = [" + (length - 1) + ", K], K from 1 to " + MAX_TARGETS,
                    "value_error");
        }
        int k = (int) columns;
        JsonNode data = tensor.get("data");
        if (data.size() != (length - 1) * k) {
            throw invalid("Must hold " + (length - 1) * k + " values (the shape's), not " + data.size(), "value_error");
        }
        int[][] targets = new int[length - 1][k];
        boolean any = false;
        for (int i = 0; i < data.size(); i++) {
            JsonNode id = data.get(i);
            if (!id.isIntegralNumber() || id.asLong() < -1 || id.asLong() > Integer.MAX_VALUE) {
                throw ApiException.invalid(Violation.of("Must be a token id or -1 (nothing asked)", "int_type", "body",
                        TARGETS, "data", i));
            }
            targets[i / k][i % k] = id.asInt();
            any |= id.asInt() >= 0;
        }
        if (!any) {
            throw invalid("Asks no token id (every cell is -1)", "value_error");
        }
        return targets;
    }

    private static ApiException invalid(String message, String type) {
        return ApiException.invalid(Violation.of(message, type, "body", TARGETS));
    }

    /** The result's prompt fields: null before the last N positions when asked; the targets' logprobs as float32. */
    static void write(ObjectNode result, TokenSampler.Asked asked, TokenSampler.Sampled sampled) {
        int first = asked.firstScored();
        if (sampled.promptLogprobs() != null) {
            ArrayNode prompt = result.putArray("prompt_logprobs");
            float[] values = sampled.promptLogprobs();
            for (int t = 0; t < values.length; t++) {
                if (Float.isNaN(values[t]) || t < first) {
                    prompt.addNull();
                } else {
                    prompt.add(values[t]);
                }
            }
        }
        if (sampled.topkPromptLogprobs() != null) {
            List<TokenSampler.Top> top = sampled.topkPromptLogprobs();
            TinkerSampling.addTop(result.putArray("topk_prompt_logprobs"),
                    first <= 1 ? top
                            : java.util.stream.IntStream.range(0, top.size())
                                    .mapToObj(t -> t < first ? null : top.get(t)).toList());
        }
        if (sampled.targetPromptLogprobs() != null) {
            float[][] rows = sampled.targetPromptLogprobs();
            ObjectNode tensor = result.putObject(TARGETS);
            ArrayNode data = tensor.putArray("data");
            for (float[] row : rows) {
                for (float value : row) {
                    data.add(value);
                }
            }
            tensor.put("dtype", "float32");
            tensor.putArray("shape").add(rows.length).add(rows.length == 0 ? 0 : rows[0].length);
        }
    }
}

package dev.fulcrum.tinker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The checks of the SDK's requests, field by field, before anything is stored: a bad request is a 422 naming the field
 * at once (the SDK raises it to the user) rather than a future that fails later on the worker.
 */
final class TinkerInput {

    /** The loss functions the worker computes, and the {@code loss_fn_inputs} each needs. */
    static final Map<String, List<String>> LOSSES = Map.of("cross_entropy", List.of("target_tokens"),
            "importance_sampling", List.of("target_tokens", "logprobs", "advantages"), "ppo",
            List.of("target_tokens", "logprobs", "advantages"), "cispo",
            List.of("target_tokens", "logprobs", "advantages"), "dro",
            List.of("target_tokens", "logprobs", "advantages"));
    /** The inputs a datum may carry. */
    static final Set<String> INPUTS = Set.of("target_tokens", "weights", "logprobs", "advantages");
    /** The most tokens of one datum. */
    static final int MAX_TOKENS = 131_072;

    private TinkerInput() {
    }

    static ObjectNode body(ObjectNode body) {
        if (body == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body"));
        }
        return body;
    }

    static String text(ObjectNode body, String field, boolean required, int max) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            if (required) {
                throw ApiException.invalid(Violation.of("Field required", "missing", "body", field));
            }
            return null;
        }
        if (!value.isTextual()) {
            throw ApiException.invalid(Violation.of("Input should be a valid string", "string_type", "body", field));
        }
        if (value.asText().isEmpty() || value.asText().length() > max) {
            throw ApiException
                    .invalid(Violation.of("Must be 1 to " + max + " characters", "string_too_long", "body", field));
        }
        return value.asText();
    }

    static long integer(ObjectNode body, String field, long min, long max) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", field));
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
            throw ApiException
                    .invalid(Violation.of("Must be an integer from " + min + " to " + max, "int_type", "body", field));
        }
        return value.asLong();
    }

    /** The shortest and longest time to live of saved weights, as Tinker's: an hour and ten years. */
    static final long MIN_TTL = 3600;
    static final long MAX_TTL = 10 * 365 * 24 * 3600L;

    /**
     * Saved weights' {@code ttl_seconds}: null when absent or null (kept until deleted), else 3600 to ten years (422
     * naming the field otherwise).
     */
    static Duration ttl(JsonNode body) {
        JsonNode value = body == null ? null : body.get("ttl_seconds");
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < MIN_TTL
                || value.asLong() > MAX_TTL) {
            throw ApiException.invalid(Violation.of("Must be an integer from " + MIN_TTL + " (an hour) to " + MAX_TTL
                    + " (ten years) seconds, or null (kept until deleted)", "int_type", "body", "ttl_seconds"));
        }
        return Duration.ofSeconds(value.asLong());
    }

    /** A forward or forward_backward input: loss, datums of text tokens, inputs of each datum's length. */
    static void forwardInput(JsonNode input, String field) {
        if (input == null || !input.isObject()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", field));
        }
        JsonNode loss = input.get("loss_fn");
        if (loss == null || !loss.isTextual() || !LOSSES.containsKey(loss.asText())) {
            throw ApiException.invalid(
                    Violation.of("Must be one of " + String.join(", ", LOSSES.keySet().stream().sorted().toList()),
                            "enum", "body", field, "loss_fn"));
        }
        JsonNode config = input.get("loss_fn_config");
        if (config != null && !config.isNull()) {
            if (!config.isObject()) {
                throw ApiException.invalid(
                        Violation.of("Must be an object of numbers", "dict_type", "body", field, "loss_fn_config"));
            }
            for (var it = config.fields(); it.hasNext();) {
                var entry = it.next();
                if (!Set.of("clip_low_threshold", "clip_high_threshold", "beta").contains(entry.getKey())) {
                    throw ApiException.invalid(Violation.of(
                            "Not a setting of the loss: clip_low_threshold, clip_high_threshold (ppo, cispo) or beta (dro)",
                            "extra_forbidden", "body", field, "loss_fn_config", entry.getKey()));
                }
                if (!entry.getValue().isNumber() || !Double.isFinite(entry.getValue().asDouble())) {
                    throw ApiException.invalid(Violation.of("Must be a finite number", "float_type", "body", field,
                            "loss_fn_config", entry.getKey()));
                }
            }
        }
        if (loss.asText().equals("dro") && (config == null || !config.path("beta").isNumber())) {
            throw ApiException.invalid(Violation.of("dro needs loss_fn_config.beta (the weight of its quadratic term)",
                    "missing", "body", field, "loss_fn_config", "beta"));
        }
        JsonNode data = input.get("data");
        if (data == null || !data.isArray() || data.isEmpty()) {
            throw ApiException
                    .invalid(Violation.of("Must be a non-empty list of datums", "list_type", "body", field, "data"));
        }
        for (int i = 0; i < data.size(); i++) {
            datum(data.get(i), LOSSES.get(loss.asText()), field, i);
        }
    }

    /** The tokens of a checked forward or forward_backward input: of every datum's {@code model_input}. */
    static int tokens(JsonNode input) {
        long tokens = 0;
        for (JsonNode datum : input.path("data")) {
            for (JsonNode chunk : datum.path("model_input").path("chunks")) {
                tokens += chunk.path("tokens").size();
            }
        }
        return (int) Math.min(tokens, Integer.MAX_VALUE);
    }

    /** The LoRA settings of {@code create_model}'s {@code lora_config} (absent: rank 32, every part trained). */
    static ObjectNode lora(JsonNode given) {
        ObjectNode lora = JsonNodeFactory.instance.objectNode();
        if (given != null && !given.isNull() && !given.isObject()) {
            throw ApiException.invalid(Violation.of("Must be an object", "dict_type", "body", "lora_config"));
        }
        JsonNode rank = given == null ? null : given.get("rank");
        if (rank != null && !rank.isNull() && (!rank.isIntegralNumber() || rank.asInt() < 1 || rank.asInt() > 256)) {
            throw ApiException.invalid(
                    Violation.of("Must be an integer from 1 to 256", "int_type", "body", "lora_config", "rank"));
        }
        lora.put("rank", rank == null || rank.isNull() ? 32 : rank.asInt());
        JsonNode seed = given == null ? null : given.get("seed");
        if (seed != null && !seed.isNull()) {
            if (!seed.isIntegralNumber() || !seed.canConvertToLong()) {
                throw ApiException
                        .invalid(Violation.of("Must be an integer", "int_type", "body", "lora_config", "seed"));
            }
            lora.put("seed", seed.asLong());
        }
        boolean any = false;
        for (String flag : List.of("train_attn", "train_mlp", "train_unembed")) {
            JsonNode value = given == null ? null : given.get(flag);
            if (value != null && !value.isNull() && !value.isBoolean()) {
                throw ApiException.invalid(Violation.of("Must be a boolean", "bool_type", "body", "lora_config", flag));
            }
            boolean on = value == null || value.isNull() || value.asBoolean();
            lora.put(flag, on);
            any |= on;
        }
        if (!any) {
            throw ApiException.invalid(Violation.of("At least one of train_attn, train_mlp, train_unembed",
                    "value_error", "body", "lora_config"));
        }
        return lora;
    }

    private static void datum(JsonNode datum, List<String> required, String field, int i) {
        if (!datum.isObject()) {
            throw ApiException.invalid(Violation.of("Must be a datum", "dict_type", "body", field, "data", i));
        }
        JsonNode chunks = datum.path("model_input").path("chunks");
        if (!chunks.isArray()) {
            throw ApiException.invalid(
                    Violation.of("Field required", "missing", "body", field, "data", i, "model_input", "chunks"));
        }
        long tokens = 0;
        for (int c = 0; c < chunks.size(); c++) {
            JsonNode chunk = chunks.get(c);
            String type = chunk.path("type").asText("encoded_text");
            if (!type.equals("encoded_text")) {
                throw ApiException.invalid(
                        Violation.of("Only text chunks (encoded_text) are served: the base models are text models",
                                "value_error", "body", field, "data", i, "model_input", "chunks", c, "type"));
            }
            JsonNode ids = chunk.get("tokens");
            if (ids == null || !ids.isArray()) {
                throw ApiException.invalid(Violation.of("Field required", "missing", "body", field, "data", i,
                        "model_input", "chunks", c, "tokens"));
            }
            for (int t = 0; t < ids.size(); t++) {
                if (!ids.get(t).isIntegralNumber() || ids.get(t).asLong() < 0
                        || ids.get(t).asLong() > Integer.MAX_VALUE) {
                    throw ApiException.invalid(Violation.of("Must be a token id (an integer from 0)", "int_type",
                            "body", field, "data", i, "model_input", "chunks", c, "tokens", t));
                }
            }
            tokens += ids.size();
        }
        if (tokens == 0 || tokens > MAX_TOKENS) {
            throw ApiException.invalid(Violation.of("A datum has 1 to " + MAX_TOKENS + " tokens", "value_error", "body",
                    field, "data", i, "model_input"));
        }
        JsonNode inputs = datum.path("loss_fn_inputs");
        if (!inputs.isObject()) {
            throw ApiException
                    .invalid(Violation.of("Field required", "missing", "body", field, "data", i, "loss_fn_inputs"));
        }
        for (String key : required) {
            if (!inputs.has(key)) {
                throw ApiException.invalid(Violation.of("The loss needs " + String.join(", ", required), "missing",
                        "body", field, "data", i, "loss_fn_inputs", key));
            }
        }
        for (var it = inputs.fields(); it.hasNext();) {
            var entry = it.next();
            Object[] at = { "body", field, "data", i, "loss_fn_inputs", entry.getKey() };
            if (!INPUTS.contains(entry.getKey())) {
                throw ApiException.invalid(
                        Violation.of("Not an input of the served losses: target_tokens, weights, logprobs, advantages",
                                "extra_forbidden", at));
            }
            tensor(entry.getValue(), tokens, entry.getKey().equals("target_tokens"), at);
        }
    }

    private static void tensor(JsonNode tensor, long length, boolean tokens, Object[] at) {
        if (!tensor.isObject() || !tensor.path("data").isArray()) {
            throw ApiException.invalid(Violation.of("Must be a TensorData {data, dtype}", "dict_type", at));
        }
        if (tensor.hasNonNull("sparse_crow_indices") || tensor.hasNonNull("sparse_col_indices")) {
            throw ApiException.invalid(Violation.of(
                    "Sparse tensors are not served: send 1-D dense tensors of the datum's length", "value_error", at));
        }
        JsonNode shape = tensor.get("shape");
        if (shape != null && !shape.isNull() && (!shape.isArray() || shape.size() != 1)) {
            throw ApiException
                    .invalid(Violation.of("Only 1-D tensors (one value per position) are served", "value_error", at));
        }
        JsonNode data = tensor.get("data");
        if (data.size() != length) {
            throw ApiException.invalid(
                    Violation.of("Must have one value per token of model_input (" + length + "), not " + data.size(),
                            "value_error", at));
        }
        for (int k = 0; k < data.size(); k++) {
            JsonNode v = data.get(k);
            boolean ok = tokens ? v.isIntegralNumber() && v.asLong() >= 0 && v.asLong() <= Integer.MAX_VALUE
                    : v.isNumber() && Double.isFinite(v.asDouble());
            if (!ok) {
                Object[] item = java.util.Arrays.copyOf(at, at.length + 2);
                item[at.length] = "data";
                item[at.length + 1] = k;
                throw ApiException.invalid(Violation.of(tokens ? "Must be a token id" : "Must be a finite number",
                        tokens ? "int_type" : "float_type", item));
            }
        }
    }

    /** Adam's parameters: each a finite number in its range. */
    static void adam(JsonNode params) {
        if (params == null || !params.isObject()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "adam_params"));
        }
        List<Violation> problems = new ArrayList<>();
        range(params, "learning_rate", 0, 10, false, problems);
        range(params, "beta1", 0, 1, true, problems);
        range(params, "beta2", 0, 1, true, problems);
        range(params, "eps", 0, 1, false, problems);
        range(params, "weight_decay", 0, 10, false, problems);
        range(params, "grad_clip_norm", 0, 1e9, false, problems);
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
    }

    private static void range(JsonNode params, String field, double min, double max, boolean belowMax,
            List<Violation> problems) {
        JsonNode value = params.get(field);
        if (value == null || value.isNull()) {
            return; // the worker's default (the SDK's) applies
        }
        double v = value.asDouble(Double.NaN);
        if (!value.isNumber() || !Double.isFinite(v) || v < min || (belowMax ? v >= max : v > max)) {
            problems.add(Violation.of("Must be a number from " + min + (belowMax ? " to below " : " to ") + max,
                    "float_type", "body", "adam_params", field));
        }
    }
}

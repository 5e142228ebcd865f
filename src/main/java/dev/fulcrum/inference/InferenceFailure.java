package dev.fulcrum.inference;

/**
 * An error of the inference API, answered as the OpenAI error object {@code {"error": {"message", "type", "param",
 * "code"}}} with its status.
 */
public class InferenceFailure extends RuntimeException {

    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final Integer retryAfterSeconds;

    public InferenceFailure(int status, String message, String type, String param, String code,
            Integer retryAfterSeconds) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static InferenceFailure invalid(String param, String message) {
        return new InferenceFailure(400, message, "invalid_request_error", param, "invalid_value", null);
    }

    /** A {@code max_tokens} above the model's limit (OpenAI answers the same, 400, and does not clamp). */
    public static InferenceFailure maxTokensTooLarge(String param, int asked, int max, String model) {
        return new InferenceFailure(400,
                param + " is too large: " + asked + ". The model '" + model + "' supports at most " + max
                        + " completion tokens, whereas you provided " + asked + ".",
                "invalid_request_error", param, "invalid_value", null);
    }

    public static InferenceFailure unsupported(String param, String model) {
        return new InferenceFailure(400, "'" + param + "' is not supported by the model '" + model + "'",
                "invalid_request_error", param, "unsupported_parameter", null);
    }

    public static InferenceFailure unauthorized() {
        return new InferenceFailure(401, "Authentication failed", "authentication_error", null, "invalid_api_key",
                null);
    }

    public static InferenceFailure forbidden(String message) {
        return new InferenceFailure(403, message, "permission_error", null, "permission_denied", null);
    }

    public static InferenceFailure modelNotFound(String model) {
        return new InferenceFailure(404, "The model '" + model + "' does not exist", "not_found_error", "model",
                "model_not_found", null);
    }

    public static InferenceFailure notFound(String message) {
        return new InferenceFailure(404, message, "not_found_error", null, null, null);
    }

    public static InferenceFailure quotaExceeded() {
        return new InferenceFailure(402, "You exceeded your current quota, please check your plan and billing details",
                "insufficient_quota", null, "insufficient_quota", null);
    }

    public static InferenceFailure concurrencyLimit() {
        return new InferenceFailure(429, "Concurrency limit reached for requests", "rate_limit_error", null,
                "concurrency_limit_exceeded", 1);
    }

    public static InferenceFailure atCapacity(String model) {
        return new InferenceFailure(429, "The model '" + model + "' is at capacity, retry shortly", "rate_limit_error",
                null, "model_at_capacity", 1);
    }

    public static InferenceFailure upstreamUnavailable(String model) {
        return new InferenceFailure(503, "The server of the model '" + model + "' cannot be reached", "server_error",
                null, "upstream_unavailable", null);
    }

    public static InferenceFailure upstreamTimeout(String model) {
        return new InferenceFailure(504, "The server of the model '" + model + "' did not answer in time",
                "timeout_error", null, "upstream_timeout", null);
    }

    public static InferenceFailure upstreamFailed(String model, String detail) {
        return new InferenceFailure(502, "The server of the model '" + model + "' failed: " + detail, "server_error",
                null, "upstream_error", null);
    }

    public static InferenceFailure tooLarge(long max) {
        return new InferenceFailure(413, "Request body too large (at most " + max + " bytes)", "invalid_request_error",
                null, "request_too_large", null);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }

    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}

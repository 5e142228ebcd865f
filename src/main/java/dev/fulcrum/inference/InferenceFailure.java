package dev.fulcrum.inference;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.ErrorResponses;
import dev.fulcrum.platform.OpenAiError;

/**
 * An error of the inference API, answered as the OpenAI error object {@code {"error": {"message", "type", "param",
 * "code"}}} with its status; the type follows the status ({@link OpenAiError#type}) unless an upstream model server
 * named its own.
 */
public class InferenceFailure extends RuntimeException {

    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final Integer retryAfterSeconds;

    public InferenceFailure(int status, String message, String param, String code, Integer retryAfterSeconds) {
        this(status, message, OpenAiError.type(status), param, code, retryAfterSeconds);
    }

    /** An upstream model server's refusal, passed through with its own type. */
    public InferenceFailure(int status, String message, String type, String param, String code,
            Integer retryAfterSeconds) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /** A platform error met on an inference route, with the field and code of its first violation. */
    public static InferenceFailure of(ApiException e) {
        Violation first = e.violations().isEmpty() ? null : e.violations().get(0);
        return new InferenceFailure(ErrorResponses.status(e.kind()), e.getMessage(),
                first == null ? null : first.field(), first == null ? null : first.type(), null);
    }

    public static InferenceFailure invalid(String param, String message) {
        return new InferenceFailure(400, message, param, "invalid_value", null);
    }

    /** A {@code max_tokens} above the model's limit (OpenAI answers the same, 400, and does not clamp). */
    public static InferenceFailure maxTokensTooLarge(String param, int asked, int max, String model) {
        return new InferenceFailure(400, param + " is too large: " + asked + ". The model '" + model
                + "' supports at most " + max + " completion tokens, whereas you provided " + asked + ".", param,
                "invalid_value", null);
    }

    public static InferenceFailure unsupported(String param, String model) {
        return new InferenceFailure(400, "'" + param + "' is not supported by the model '" + model + "'", param,
                "unsupported_parameter", null);
    }

    /** A model that does not answer on this endpoint (an embedding model asked for chat, a chat model for vectors). */
    public static InferenceFailure endpointNotSupported(String model, String endpoint) {
        return new InferenceFailure(400, "The model '" + model + "' is not supported by " + endpoint, "model",
                "model_not_supported", null);
    }

    public static InferenceFailure unauthorized() {
        return new InferenceFailure(401, "Authentication failed", null, "invalid_api_key", null);
    }

    public static InferenceFailure forbidden(String message) {
        return new InferenceFailure(403, message, null, "permission_denied", null);
    }

    public static InferenceFailure modelNotFound(String model) {
        return new InferenceFailure(404, "The model '" + model + "' does not exist", "model", "model_not_found", null);
    }

    public static InferenceFailure notFound(String message) {
        return new InferenceFailure(404, message, null, null, null);
    }

    public static InferenceFailure quotaExceeded() {
        return new InferenceFailure(402, "You exceeded your current quota, please check your plan and billing details",
                null, "insufficient_quota", null);
    }

    public static InferenceFailure concurrencyLimit() {
        return new InferenceFailure(429, "Concurrency limit reached for requests", null, "concurrency_limit_exceeded",
                1);
    }

    public static InferenceFailure atCapacity(String model) {
        return new InferenceFailure(429, "The model '" + model + "' is at capacity, retry shortly", null,
                "model_at_capacity", 1);
    }

    public static InferenceFailure upstreamUnavailable(String model) {
        return new InferenceFailure(503, "The server of the model '" + model + "' cannot be reached", null,
                "upstream_unavailable", null);
    }

    public static InferenceFailure upstreamTimeout(String model) {
        return new InferenceFailure(504, "The server of the model '" + model + "' did not answer in time", null,
                "upstream_timeout", null);
    }

    public static InferenceFailure upstreamFailed(String model, String detail) {
        return new InferenceFailure(502, "The server of the model '" + model + "' failed: " + detail, null,
                "upstream_error", null);
    }

    /** A local engine stopped (its model left the catalog, or the server stops) before the request's turn came. */
    public static InferenceFailure engineStopped(String model) {
        return new InferenceFailure(503, "The model '" + model + "' was unloaded before the request's turn; retry it",
                null, "model_unavailable", 1);
    }

    /** A request that came while this replica drains: another replica answers it. */
    public static InferenceFailure shuttingDown() {
        return new InferenceFailure(503, "This server is shutting down; retry the request", null, "shutting_down", 1);
    }

    /** A completion still under way when the drain's grace ran out. */
    public static InferenceFailure cutShortByShutdown() {
        return new InferenceFailure(503, "The server shut down before the completion was done; retry the request", null,
                "shutting_down", 1);
    }

    public static InferenceFailure tooLarge(long max) {
        return new InferenceFailure(413, "Request body too large (at most " + max + " bytes)", null,
                "request_too_large", null);
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

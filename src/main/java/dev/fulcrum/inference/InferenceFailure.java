package dev.fulcrum.inference;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Kind;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * An error of the inference API in the platform's words: what went wrong ({@link Kind}), a message, the OpenAI
 * {@code param} and {@code code} it concerns, and when a retry may work. It carries no HTTP status of its own:
 * {@link OpenAiErrors} answers it as the OpenAI error object {@code {"error": {"message", "type", "param", "code"}}}
 * with the status of its kind. The one exception is an upstream model server's own refusal, passed through as the
 * server answered it ({@link #upstream}).
 */
public class InferenceFailure extends RuntimeException {

    private final Kind kind;
    private final String param;
    private final String code;
    private final Integer retryAfterSeconds;
    private final Upstream upstream;
    private final ServerFault fault;

    /** An upstream model server's refusal as it answered it: its status and its own error type. */
    public record Upstream(int status, String type) {
    }

    /**
     * What one model server (a replica) did, for the gateway's routing: whether to try another replica and whether the
     * replica counts as failing. {@code status} is the server's HTTP status for {@link Reason#ANSWERED}, else 0.
     */
    public record ServerFault(Reason reason, int status) {

        public enum Reason {
            /** No connection: refused, or not made in time. */
            UNREACHABLE,
            /** The connection broke before the answer was complete. */
            CONNECTION_LOST,
            /** No answer within the timeout. */
            TIMEOUT,
            /** The replica's connections and their queue are all taken. */
            BUSY,
            /** An answer that is not the protocol's (not JSON). */
            BAD_ANSWER,
            /** An error status. */
            ANSWERED
        }

        public static ServerFault answered(int status) {
            return new ServerFault(Reason.ANSWERED, status);
        }

        /** Whether the replica is failing: no connection or answer, a broken one, or a 5xx. */
        public boolean failing() {
            return switch (reason) {
                case UNREACHABLE, CONNECTION_LOST, TIMEOUT, BAD_ANSWER -> true;
                case BUSY -> false;
                case ANSWERED -> status >= 500;
            };
        }

        /**
         * Whether another replica may answer instead: nothing reached the server or it could not take the request
         * (connection refused, reset or closed, its pool full, 502, 503, 504, 429). A timeout is not: the request's own
         * time is spent.
         */
        public boolean retryable() {
            return switch (reason) {
                case UNREACHABLE, CONNECTION_LOST, BUSY -> true;
                case TIMEOUT, BAD_ANSWER -> false;
                case ANSWERED -> status == 429 || status == 502 || status == 503 || status == 504;
            };
        }
    }

    public InferenceFailure(Kind kind, String message, String param, String code, Integer retryAfterSeconds) {
        this(kind, message, param, code, retryAfterSeconds, null, null);
    }

    private InferenceFailure(Kind kind, String message, String param, String code, Integer retryAfterSeconds,
            Upstream upstream, ServerFault fault) {
        super(message, null, false, false);
        this.kind = kind;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
        this.upstream = upstream;
        this.fault = fault;
    }

    /** The same failure, caused by a model server's {@code fault}. */
    public InferenceFailure causedBy(ServerFault serverFault) {
        return new InferenceFailure(kind, getMessage(), param, code, retryAfterSeconds, upstream, serverFault);
    }

    /** What the model server did, when a model server caused this failure; null otherwise. */
    public ServerFault fault() {
        return fault;
    }

    /**
     * An upstream model server's refusal of the request (a status below 500), passed through with its status, type,
     * param and code; {@code kind} is what it means here.
     */
    public static InferenceFailure upstream(Kind kind, Upstream answer, String message, String param, String code,
            Integer retryAfterSeconds) {
        return new InferenceFailure(kind, message, param, code, retryAfterSeconds, answer, null);
    }

    /** The same failure naming another field (the Responses API's names for the chat completions' fields). */
    public InferenceFailure withParam(String renamed, String message) {
        return new InferenceFailure(kind, message, renamed, code, retryAfterSeconds, upstream, fault);
    }

    /** A platform error met on an inference route, with the field and code of its first violation. */
    public static InferenceFailure of(ApiException e) {
        Violation first = e.violations().isEmpty() ? null : e.violations().get(0);
        return new InferenceFailure(e.kind(), e.getMessage(), first == null ? null : first.field(),
                first == null ? null : first.type(), null);
    }

    public static InferenceFailure invalid(String param, String message) {
        return new InferenceFailure(Kind.INVALID, message, param, "invalid_value", null);
    }

    /** A {@code max_tokens} above the model's limit (OpenAI answers the same, 400, and does not clamp). */
    public static InferenceFailure maxTokensTooLarge(String param, int asked, int max, String model) {
        return new InferenceFailure(Kind.INVALID, param + " is too large: " + asked + ". The model '" + model
                + "' supports at most " + max + " completion tokens, whereas you provided " + asked + ".", param,
                "invalid_value", null);
    }

    public static InferenceFailure unsupported(String param, String model) {
        return new InferenceFailure(Kind.INVALID, "'" + param + "' is not supported by the model '" + model + "'",
                param, "unsupported_parameter", null);
    }

    /** A model that does not answer on this endpoint (an embedding model asked for chat, a chat model for vectors). */
    public static InferenceFailure endpointNotSupported(String model, String endpoint) {
        return new InferenceFailure(Kind.INVALID, "The model '" + model + "' is not supported by " + endpoint, "model",
                "model_not_supported", null);
    }

    public static InferenceFailure unauthorized() {
        return new InferenceFailure(Kind.UNAUTHENTICATED, "Authentication failed", null, "invalid_api_key", null);
    }

    public static InferenceFailure forbidden(String message) {
        return new InferenceFailure(Kind.FORBIDDEN, message, null, "permission_denied", null);
    }

    public static InferenceFailure modelNotFound(String model) {
        return new InferenceFailure(Kind.NOT_FOUND, "The model '" + model + "' does not exist", "model",
                "model_not_found", null);
    }

    public static InferenceFailure notFound(String message) {
        return new InferenceFailure(Kind.NOT_FOUND, message, null, null, null);
    }

    public static InferenceFailure quotaExceeded() {
        return new InferenceFailure(Kind.QUOTA_EXCEEDED,
                "You exceeded your current quota, please check your plan and billing details", null,
                "insufficient_quota", null);
    }

    public static InferenceFailure concurrencyLimit() {
        return new InferenceFailure(Kind.AT_CAPACITY, "Concurrency limit reached for requests", null,
                "concurrency_limit_exceeded", 1);
    }

    public static InferenceFailure atCapacity(String model) {
        return new InferenceFailure(Kind.AT_CAPACITY, "The model '" + model + "' is at capacity, retry shortly", null,
                "model_at_capacity", 1);
    }

    public static InferenceFailure upstreamUnavailable(String model) {
        return new InferenceFailure(Kind.UNAVAILABLE, "The server of the model '" + model + "' cannot be reached", null,
                "upstream_unavailable", null);
    }

    /** Every replica of the model's server is ejected (or was tried), and no fallback model took the request. */
    public static InferenceFailure noReplica(String model) {
        return new InferenceFailure(Kind.UNAVAILABLE,
                "No replica of the server of the model '" + model + "' is available; retry shortly", null,
                "upstream_unavailable", 1);
    }

    public static InferenceFailure upstreamTimeout(String model) {
        return new InferenceFailure(Kind.UPSTREAM_TIMEOUT,
                "The server of the model '" + model + "' did not answer in time", null, "upstream_timeout", null);
    }

    public static InferenceFailure upstreamFailed(String model, String detail) {
        return new InferenceFailure(Kind.UPSTREAM_FAILED, "The server of the model '" + model + "' failed: " + detail,
                null, "upstream_error", null);
    }

    /** A local engine stopped (its model left the catalog, or the server stops) before the request's turn came. */
    public static InferenceFailure engineStopped(String model) {
        return new InferenceFailure(Kind.UNAVAILABLE,
                "The model '" + model + "' was unloaded before the request's turn; retry it", null, "model_unavailable",
                1);
    }

    /** A request that came while this replica drains: another replica answers it. */
    public static InferenceFailure shuttingDown() {
        return new InferenceFailure(Kind.UNAVAILABLE, "This server is shutting down; retry the request", null,
                "shutting_down", 1);
    }

    /** A completion still under way when the drain's grace ran out. */
    public static InferenceFailure cutShortByShutdown() {
        return new InferenceFailure(Kind.UNAVAILABLE,
                "The server shut down before the completion was done; retry the request", null, "shutting_down", 1);
    }

    public static InferenceFailure tooLarge(long max) {
        return new InferenceFailure(Kind.TOO_LARGE, "Request body too large (at most " + max + " bytes)", null,
                "request_too_large", null);
    }

    public Kind kind() {
        return kind;
    }

    /** The upstream model server's own answer this failure passes through, or null. */
    public Upstream upstreamAnswer() {
        return upstream;
    }

    /** The status this failure is answered with ({@link OpenAiErrors#status}). */
    public int status() {
        return OpenAiErrors.status(this);
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

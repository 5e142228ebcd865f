package dev.fulcrum.platform.errors;

import java.util.List;

/**
 * An error a client caused or may see, raised by the services in the platform's own words: what went wrong (its
 * {@link Kind}), a message and, for invalid input, where. It carries no HTTP status:
 * {@link dev.fulcrum.platform.http.ErrorResponses} (and each other door, the console and the chat route) decides the
 * status and the shape of the interface that was called. The message is shown to the client, so it never holds secrets.
 */
public class ApiException extends RuntimeException {

    /** What kind of refusal this is; each door answers it in its own terms. */
    public enum Kind {
        /** No valid credentials. */
        UNAUTHENTICATED,
        /** The caller is known but may not do this. */
        FORBIDDEN,
        /** The thing named does not exist, or the caller may not know that it does. */
        NOT_FOUND,
        /** The request contradicts the state of what it names (a duplicate, a finished job). */
        CONFLICT,
        /** The request carries more than the server accepts. */
        TOO_LARGE,
        /** A value breaks its rule; the violations say where. */
        INVALID,
        /** A request the interface refuses before reading its values (OpenAI's malformed request). */
        MALFORMED,
        /** A dependency (the database, an upstream) cannot answer now; the same request may work later. */
        UNAVAILABLE,
        /** Too many requests at once for what they ask (a model, a caller's concurrency): retry shortly. */
        AT_CAPACITY,
        /** The caller's budget (tokens of a period) is used up. */
        QUOTA_EXCEEDED,
        /** A server this one relies on (a model server) failed to answer the request. */
        UPSTREAM_FAILED,
        /** A server this one relies on did not answer in time. */
        UPSTREAM_TIMEOUT,
        /** A component of this server failed on the request (a model's engine); nothing was changed. */
        FAILED,
        /** The server's storage (its disk, the database's disk) has no room for what the request writes. */
        STORAGE_FULL
    }

    private final Kind kind;
    private final List<Violation> violations;

    private ApiException(Kind kind, String message, List<Violation> violations) {
        super(message, null, false, false);
        this.kind = kind;
        this.violations = List.copyOf(violations);
    }

    public Kind kind() {
        return kind;
    }

    /** Field-level problems of a request that failed validation; empty for other errors. */
    public List<Violation> violations() {
        return violations;
    }

    public static ApiException unauthorized(String message) {
        return new ApiException(Kind.UNAUTHENTICATED, message, List.of());
    }

    public static ApiException forbidden(String message) {
        return new ApiException(Kind.FORBIDDEN, message, List.of());
    }

    public static ApiException notFound(String message) {
        return new ApiException(Kind.NOT_FOUND, message, List.of());
    }

    public static ApiException conflict(String message) {
        return new ApiException(Kind.CONFLICT, message, List.of());
    }

    public static ApiException payloadTooLarge(String message) {
        return new ApiException(Kind.TOO_LARGE, message, List.of());
    }

    public static ApiException unavailable(String message) {
        return new ApiException(Kind.UNAVAILABLE, message, List.of());
    }

    /** A write the server has no room for ({@link StorageFull}); nothing of it was stored. */
    /** A server this one relies on (a model server, the Hugging Face Hub) refused or failed the request. */
    public static ApiException upstreamFailed(String message) {
        return new ApiException(Kind.UPSTREAM_FAILED, message, List.of());
    }

    public static ApiException atCapacity(String message) {
        return new ApiException(Kind.AT_CAPACITY, message, List.of());
    }

    /** The caller's budget (its team's monthly tokens) is used up. */
    public static ApiException quotaExceeded(String message) {
        return new ApiException(Kind.QUOTA_EXCEEDED, message, List.of());
    }

    public static ApiException storageFull(String message) {
        return new ApiException(Kind.STORAGE_FULL, message, List.of());
    }

    public static ApiException invalid(List<Violation> violations) {
        return new ApiException(Kind.INVALID, violations.get(0).msg(), violations);
    }

    /** Violations of a request refused as malformed, as the inference API (OpenAI) refuses one. */
    public static ApiException badRequest(List<Violation> violations) {
        return new ApiException(Kind.MALFORMED, violations.get(0).msg(), violations);
    }

    public static ApiException invalid(Violation violation) {
        return invalid(List.of(violation));
    }

    /**
     * One field-level problem: where ({@code loc}, FastAPI style, e.g. {@code ["body", "rows", 3]}), what, and a
     * machine-readable type.
     */
    public record Violation(List<Object> loc, String msg, String type) {

        public static Violation of(String msg, String type, Object... loc) {
            return new Violation(List.of(loc), msg, type);
        }

        /** The location as a dotted field path without its leading part ("body", "path", "query"). */
        public String field() {
            StringBuilder field = new StringBuilder();
            for (int i = loc.size() > 1 ? 1 : 0; i < loc.size(); i++) {
                Object part = loc.get(i);
                if (part instanceof Integer) {
                    field.append('[').append(part).append(']');
                } else {
                    field.append(field.length() == 0 ? "" : ".").append(part);
                }
            }
            return field.toString();
        }
    }
}

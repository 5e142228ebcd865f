package dev.fulcrum.platform;

import java.util.List;

import jakarta.ws.rs.core.Response.Status;

/**
 * An error a client caused or may see; {@link ErrorResponses} renders it in the shape of the interface that was called.
 * The message is shown to the client, so it never holds secrets.
 */
public class ApiException extends RuntimeException {

    private final int status;
    private final List<Violation> violations;

    public ApiException(int status, String message) {
        this(status, message, List.of());
    }

    private ApiException(int status, String message, List<Violation> violations) {
        super(message, null, false, false);
        this.status = status;
        this.violations = List.copyOf(violations);
    }

    public int status() {
        return status;
    }

    /** Field-level problems of a request that failed validation; empty for other errors. */
    public List<Violation> violations() {
        return violations;
    }

    public static ApiException unauthorized(String message) {
        return new ApiException(Status.UNAUTHORIZED.getStatusCode(), message);
    }

    public static ApiException forbidden(String message) {
        return new ApiException(Status.FORBIDDEN.getStatusCode(), message);
    }

    public static ApiException notFound(String message) {
        return new ApiException(Status.NOT_FOUND.getStatusCode(), message);
    }

    public static ApiException conflict(String message) {
        return new ApiException(Status.CONFLICT.getStatusCode(), message);
    }

    public static ApiException payloadTooLarge(String message) {
        return new ApiException(Status.REQUEST_ENTITY_TOO_LARGE.getStatusCode(), message);
    }

    public static ApiException invalid(List<Violation> violations) {
        return new ApiException(422, violations.get(0).msg(), violations);
    }

    /** Violations answered with 400, as the inference API (OpenAI) refuses a malformed request. */
    public static ApiException badRequest(List<Violation> violations) {
        return new ApiException(400, violations.get(0).msg(), violations);
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

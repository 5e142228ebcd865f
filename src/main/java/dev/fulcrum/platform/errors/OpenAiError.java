package dev.fulcrum.platform.errors;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The OpenAI error object {@code {"error": {"message", "type", "param", "code"}}}, built in one place for the inference
 * routes outside JAX-RS (the chat completions) and for the JAX-RS resources of the inference API alike.
 */
public final class OpenAiError {

    private OpenAiError() {
    }

    /** OpenAI's error type for a status. */
    public static String type(int status) {
        return switch (status) {
            case 401 -> "authentication_error";
            case 402 -> "insufficient_quota";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 429 -> "rate_limit_error";
            case 504 -> "timeout_error";
            default -> status >= 500 ? "server_error" : "invalid_request_error";
        };
    }

    /** The code a status carries when the error names no more specific one. */
    public static String code(int status) {
        return switch (status) {
            case 401 -> "invalid_api_key";
            case 403 -> "permission_denied";
            case 413 -> "request_too_large";
            case 507 -> "insufficient_storage";
            default -> null;
        };
    }

    /** The error object with the type and, unless {@code code} is given, the code of its status. */
    public static Map<String, Object> body(int status, String message, String param, String code) {
        return body(status, message, type(status), param, code);
    }

    /** The error object with an explicit type (an upstream model server's own, passed through). */
    public static Map<String, Object> body(int status, String message, String type, String param, String code) {
        Map<String, Object> error = new LinkedHashMap<>();
        // the OpenAI SDKs' clients expect this message for every key problem
        error.put("message", status == 401 ? "Authentication failed" : message);
        error.put("type", type);
        error.put("param", param);
        error.put("code", code != null ? code : code(status));
        return Map.of("error", error);
    }
}

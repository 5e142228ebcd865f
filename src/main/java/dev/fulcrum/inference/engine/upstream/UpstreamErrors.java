package dev.fulcrum.inference.engine.upstream;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.http.HttpClientResponse;

import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.InferenceFailure.ServerFault;
import dev.fulcrum.inference.InferenceFailure.ServerFault.Reason;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * What a model server's failures become for the client: its 4xx with its status and OpenAI error object, its 5xx and
 * broken answers a 502, no connection a 503, no answer in time a 504, a full connection pool a 503 at capacity.
 */
final class UpstreamErrors {

    private static final int MAX_ERROR_BODY = 64 * 1024;

    private UpstreamErrors() {
    }

    /** An upstream 4xx goes to the client with its status and message; a 5xx is a 502. */
    static void relay(ObjectMapper json, Exchange exchange, HttpClientResponse response) {
        int status = response.statusCode();
        Buffer collected = Buffer.buffer();
        response.handler(chunk -> {
            if (collected.length() < MAX_ERROR_BODY) {
                collected.appendBuffer(chunk);
            }
        });
        response.exceptionHandler(e -> fail(exchange, e));
        response.endHandler(v -> {
            String message = message(json, collected);
            InferenceFailure failure;
            if (status >= 500) {
                failure = InferenceFailure
                        .upstreamFailed(exchange.model().id(), message == null ? "status " + status : message)
                        .causedBy(ServerFault.answered(status));
            } else {
                JsonNode error = errorObject(json, collected);
                failure = InferenceFailure
                        .upstream(refusal(status),
                                new InferenceFailure.Upstream(status,
                                        text(error, "type",
                                                status == 429 ? "rate_limit_error" : "invalid_request_error")),
                                message == null ? "The model server refused the request" : message,
                                text(error, "param", null), text(error, "code", null),
                                status == 429 ? retryAfter(response.getHeader("Retry-After")) : null)
                        .causedBy(ServerFault.answered(status));
            }
            exchange.fail(failure);
            exchange.finish(new Outcome(failure.status(), 0, 0));
        });
    }

    /** What a model server's refusal (a status below 500) means. */
    static Kind refusal(int status) {
        return switch (status) {
            case 401 -> Kind.UNAUTHENTICATED;
            case 403 -> Kind.FORBIDDEN;
            case 404, 405 -> Kind.NOT_FOUND;
            case 409 -> Kind.CONFLICT;
            case 413 -> Kind.TOO_LARGE;
            case 429 -> Kind.AT_CAPACITY;
            default -> Kind.INVALID;
        };
    }

    private static Integer retryAfter(String header) {
        try {
            return header == null ? 1 : Math.max(1, Integer.parseInt(header.trim()));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    static JsonNode errorObject(ObjectMapper json, Buffer body) {
        try {
            JsonNode root = json.readTree(body.getBytes());
            JsonNode error = root.get("error");
            return error != null && error.isObject() ? error : root;
        } catch (Exception e) {
            return null;
        }
    }

    /** The message of an error answer: OpenAI's {@code error.message}, vLLM's {@code message}, or the text. */
    static String message(ObjectMapper json, Buffer body) {
        JsonNode error = errorObject(json, body);
        if (error != null) {
            if (error.path("message").isTextual()) {
                return error.path("message").asText();
            }
            if (error.isTextual()) {
                return error.asText();
            }
            if (error.path("detail").isTextual()) {
                return error.path("detail").asText();
            }
        }
        String text = body.toString(StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? null : text.substring(0, Math.min(text.length(), 1000));
    }

    private static String text(JsonNode node, String field, String otherwise) {
        return node != null && node.path(field).isTextual() ? node.path(field).asText() : otherwise;
    }

    static void fail(Exchange exchange, Throwable cause) {
        if (exchange.cancelled()) {
            return;
        }
        InferenceFailure failure = cause instanceof InferenceFailure known ? known : translate(exchange, cause);
        exchange.fail(failure);
        exchange.finish(new Outcome(failure.status(), 0, 0));
    }

    private static InferenceFailure translate(Exchange exchange, Throwable cause) {
        return translate(exchange.model().id(), cause, "connection closed");
    }

    /**
     * A failure to reach the server: at capacity, unavailable (503), a timeout (504), or {@code detail} (502); each
     * with the {@link ServerFault} the router reads.
     */
    static InferenceFailure translate(String model, Throwable cause, String detail) {
        if (cause instanceof ConnectionPoolTooBusyException) {
            return InferenceFailure.atCapacity(model).causedBy(new ServerFault(Reason.BUSY, 0));
        }
        if (cause instanceof ConnectTimeoutException || cause instanceof ConnectException
                || cause instanceof NoRouteToHostException || cause instanceof UnknownHostException) {
            return InferenceFailure.upstreamUnavailable(model).causedBy(new ServerFault(Reason.UNREACHABLE, 0));
        }
        if (cause instanceof TimeoutException) {
            return InferenceFailure.upstreamTimeout(model).causedBy(new ServerFault(Reason.TIMEOUT, 0));
        }
        return InferenceFailure.upstreamFailed(model, detail).causedBy(new ServerFault(Reason.CONNECTION_LOST, 0));
    }

    /** The server's answer is not the protocol's. */
    static InferenceFailure badAnswer(String model) {
        return InferenceFailure.upstreamFailed(model, "invalid JSON answer")
                .causedBy(new ServerFault(Reason.BAD_ANSWER, 0));
    }

    /** The start of a body the server answered, for the log: at most 500 characters, on one line. */
    static String excerpt(Buffer body) {
        if (body == null || body.length() == 0) {
            return "an empty body";
        }
        String text = body.getString(0, Math.min(body.length(), 500)).replaceAll("\\s+", " ");
        return "\"" + text + (body.length() > 500 ? "...\"" : "\"") + " (" + body.length() + " bytes)";
    }
}

package dev.fulcrum.inference;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.platform.errors.ApiException.Kind;
import dev.fulcrum.platform.errors.OpenAiError;
import dev.fulcrum.platform.http.ErrorResponses;

/**
 * The inference API's one place that answers an {@link InferenceFailure}: its status (OpenAI's: invalid values are 400,
 * the other kinds as the platform answers them) and the OpenAI error object ({@link OpenAiError}), written on the
 * routes that do not go through JAX-RS (the chat completions).
 */
public final class OpenAiErrors {

    private OpenAiErrors() {
    }

    /** The status of a failure: an upstream's own refusal keeps its status; OpenAI answers invalid input 400. */
    static int status(InferenceFailure failure) {
        if (failure.upstreamAnswer() != null) {
            return failure.upstreamAnswer().status();
        }
        return failure.kind() == Kind.INVALID ? 400 : ErrorResponses.status(failure.kind());
    }

    /** OpenAI's error type of a failure: an upstream's own, or the one of its status. */
    public static String type(InferenceFailure failure) {
        return failure.upstreamAnswer() != null ? failure.upstreamAnswer().type() : OpenAiError.type(failure.status());
    }

    public static Buffer body(InferenceFailure failure) {
        return new JsonObject(OpenAiError.body(failure.status(), failure.getMessage(), type(failure), failure.param(),
                failure.code())).toBuffer();
    }

    public static void write(HttpServerResponse response, InferenceFailure failure) {
        response.setStatusCode(failure.status()).putHeader("Content-Type", "application/json");
        if (failure.status() == 401) {
            response.putHeader("WWW-Authenticate", "Bearer realm=\"fulcrum\"");
        }
        if (failure.retryAfterSeconds() != null) {
            response.putHeader("Retry-After", failure.retryAfterSeconds().toString());
        }
        response.end(body(failure));
    }
}

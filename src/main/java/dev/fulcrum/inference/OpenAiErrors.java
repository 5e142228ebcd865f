package dev.fulcrum.inference;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.platform.OpenAiError;

/**
 * Writes the OpenAI error object ({@link OpenAiError}) on the routes that do not go through JAX-RS (the chat
 * completions).
 */
public final class OpenAiErrors {

    private OpenAiErrors() {
    }

    public static Buffer body(InferenceFailure failure) {
        return new JsonObject(OpenAiError.body(failure.status(), failure.getMessage(), failure.type(), failure.param(),
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

package dev.fulcrum.inference;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

/** Writes the OpenAI error object on the routes that do not go through JAX-RS (the chat completions). */
final class OpenAiErrors {

    private OpenAiErrors() {
    }

    static Buffer body(InferenceFailure failure) {
        JsonObject error = new JsonObject().put("message", failure.getMessage()).put("type", failure.type())
                .put("param", failure.param()).put("code", failure.code());
        return new JsonObject().put("error", error).toBuffer();
    }

    static void write(HttpServerResponse response, InferenceFailure failure) {
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

package dev.fulcrum.inference.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.ext.web.Router;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionBackend;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;

/**
 * {@code POST /v1/completions}, OpenAI's legacy text completions, as described in {@code openapi/inference.yaml}:
 * answered by backends that are {@link TextCompletionBackend}s, on the {@link Gateway}'s path.
 */
@ApplicationScoped
public class TextCompletions extends Endpoint<TextCompletionRequest, TextCompletionExchange> {

    static final String PATH = "/v1/completions";

    public TextCompletions() {
        super(PATH, TextCompletionRequest::parse, TextCompletionRequest::model, TextCompletionExchange::new);
    }

    void routes(@Observes Router router) {
        route(router);
    }

    @Override
    void check(Backend backend, TextCompletionRequest request, String modelId) {
        if (!(backend instanceof TextCompletionBackend completions)) {
            throw InferenceFailure.endpointNotSupported(modelId, PATH);
        }
        completions.check(request, modelId);
    }

    @Override
    void answer(Backend backend, TextCompletionExchange exchange) {
        ((TextCompletionBackend) backend).complete(exchange);
    }
}

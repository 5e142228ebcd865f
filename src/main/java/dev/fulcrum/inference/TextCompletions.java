package dev.fulcrum.inference;

import java.util.function.Consumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.ChatExchange.Outcome;

/**
 * {@code POST /v1/completions}, OpenAI's legacy text completions, as described in {@code openapi/inference.yaml}:
 * answered by backends that are {@link TextCompletionBackend}s, on the {@link Gateway}'s path.
 */
@ApplicationScoped
public class TextCompletions implements Endpoint<TextCompletionRequest, TextCompletionExchange> {

    static final String PATH = "/v1/completions";

    @Inject
    Gateway gateway;

    @Inject
    ObjectMapper json;

    void routes(@Observes Router router) {
        router.route(HttpMethod.POST, PATH).order(-100).handler(context -> gateway.handle(context, this));
    }

    @Override
    public String path() {
        return PATH;
    }

    @Override
    public TextCompletionRequest parse(byte[] body) {
        return TextCompletionRequest.parse(json, body);
    }

    @Override
    public String model(TextCompletionRequest request) {
        return request.model();
    }

    @Override
    public void check(Backend backend, TextCompletionRequest request, String modelId) {
        if (!(backend instanceof TextCompletionBackend completions)) {
            throw InferenceFailure.endpointNotSupported(modelId, PATH);
        }
        completions.check(request, modelId);
    }

    @Override
    public TextCompletionExchange exchange(RoutingContext context, TextCompletionRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        return new TextCompletionExchange(context, request, model, caller, onFinish);
    }

    @Override
    public void answer(Backend backend, TextCompletionExchange exchange) {
        ((TextCompletionBackend) backend).complete(exchange);
    }
}

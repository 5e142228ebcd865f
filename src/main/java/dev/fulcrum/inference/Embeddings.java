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
 * {@code POST /v1/embeddings}, as described in {@code openapi/inference.yaml}: answered by backends that are
 * {@link EmbeddingBackend}s (an upstream, the {@link LocalEmbeddings local model}), on the {@link Gateway}'s path.
 */
@ApplicationScoped
public class Embeddings implements Endpoint<EmbeddingRequest, EmbeddingExchange> {

    static final String PATH = "/v1/embeddings";

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
    public EmbeddingRequest parse(byte[] body) {
        return EmbeddingRequest.parse(json, body);
    }

    @Override
    public String model(EmbeddingRequest request) {
        return request.model();
    }

    @Override
    public void check(Backend backend, EmbeddingRequest request, String modelId) {
        if (!(backend instanceof EmbeddingBackend embeddings)) {
            throw InferenceFailure.endpointNotSupported(modelId, PATH);
        }
        embeddings.check(request, modelId);
    }

    @Override
    public EmbeddingExchange exchange(RoutingContext context, EmbeddingRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        return new EmbeddingExchange(context, request, model, caller, onFinish);
    }

    @Override
    public void answer(Backend backend, EmbeddingExchange exchange) {
        ((EmbeddingBackend) backend).embed(exchange);
    }
}

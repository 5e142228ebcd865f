package dev.fulcrum.inference.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.ext.web.Router;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.EmbeddingBackend;
import dev.fulcrum.inference.EmbeddingExchange;
import dev.fulcrum.inference.EmbeddingRequest;
import dev.fulcrum.inference.InferenceFailure;

/**
 * {@code POST /v1/embeddings}, as described in {@code openapi/inference.yaml}: answered by backends that are
 * {@link EmbeddingBackend}s (an upstream, the local embedding model), on the {@link Gateway}'s path.
 */
@ApplicationScoped
public class Embeddings extends Endpoint<EmbeddingRequest, EmbeddingExchange> {

    static final String PATH = "/v1/embeddings";

    public Embeddings() {
        super(PATH, EmbeddingRequest::parse, EmbeddingRequest::model, EmbeddingExchange::new);
    }

    void routes(@Observes Router router) {
        route(router);
    }

    @Override
    void check(Backend backend, EmbeddingRequest request, String modelId) {
        if (!(backend instanceof EmbeddingBackend embeddings)) {
            throw InferenceFailure.endpointNotSupported(modelId, PATH);
        }
        embeddings.check(request, modelId);
    }

    @Override
    void answer(Backend backend, EmbeddingExchange exchange) {
        ((EmbeddingBackend) backend).embed(exchange);
    }
}

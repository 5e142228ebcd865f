package dev.fulcrum.inference;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.ext.web.Router;

/**
 * {@code POST /v1/embeddings}, as described in {@code openapi/inference.yaml}: answered by backends that are
 * {@link EmbeddingBackend}s (an upstream, the {@link LocalEmbeddings local model}), on the {@link Gateway}'s path.
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

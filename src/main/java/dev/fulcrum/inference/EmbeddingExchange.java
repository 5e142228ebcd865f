package dev.fulcrum.inference;

import java.util.function.Consumer;

import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.Exchange.Outcome;

/** One embeddings request on its way ({@code POST /v1/embeddings}); see {@link Exchange}. Never a stream. */
public final class EmbeddingExchange extends Exchange {

    private final EmbeddingRequest request;

    public EmbeddingExchange(RoutingContext context, EmbeddingRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        super(context, model, caller, onFinish);
        this.request = request;
    }

    public EmbeddingRequest request() {
        return request;
    }

    @Override
    public boolean stream() {
        return false;
    }
}

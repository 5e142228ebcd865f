package dev.fulcrum.inference;

import java.util.function.Consumer;

import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.ChatExchange.Outcome;

/**
 * What differs between the gateway's endpoints (chat completions, text completions, embeddings, responses): how the
 * body is read, what a model's backend must be able to do, and who answers. Everything else (the key, the project, the
 * quota, the concurrency limit, usage, metrics, draining) is the {@link Gateway}'s, the same for all.
 *
 * @param <R>
 *            the checked request
 * @param <E>
 *            the exchange the backend answers through
 */
interface Endpoint<R, E extends Exchange> {

    /** The route template (metrics and logs). */
    String path();

    /** The checked request; a bad one is an {@link InferenceFailure} naming the field. */
    R parse(byte[] body);

    /** The model id the request names. */
    String model(R request);

    /**
     * Refuses a request the model cannot answer on this endpoint with an {@link InferenceFailure} (a model that does
     * not serve the endpoint at all: {@link InferenceFailure#endpointNotSupported}).
     */
    void check(Backend backend, R request, String modelId);

    E exchange(RoutingContext context, R request, ServedModel model, InferenceCaller caller,
            Consumer<Outcome> onFinish);

    /** Starts the answer on the event loop; it must not block it. */
    void answer(Backend backend, E exchange);
}

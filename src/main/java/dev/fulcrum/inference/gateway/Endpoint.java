package dev.fulcrum.inference.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;

/**
 * What differs between the gateway's endpoints (chat completions, text completions, embeddings, responses): the path,
 * how the body is read, what a model's backend must be able to do, and who answers. Everything else (the key, the
 * project, the quota, the concurrency limit, usage, metrics, draining) is the {@link Gateway}'s, the same for all.
 *
 * @param <R>
 *            the checked request
 * @param <E>
 *            the exchange the backend answers through
 */
abstract class Endpoint<R, E extends Exchange> {

    /** How an endpoint's exchange is made for an accepted request (its constructor). */
    interface Exchanges<R, E> {
        E of(RoutingContext context, R request, ServedModel model, InferenceCaller caller, Consumer<Outcome> onFinish);
    }

    @Inject
    Gateway gateway;

    @Inject
    ObjectMapper json;

    private final String path;
    private final BiFunction<ObjectMapper, byte[], R> parser;
    private final Function<R, String> modelId;
    private final Exchanges<R, E> exchanges;

    /**
     * @param parser
     *            the checked request of a body; a bad one is an {@link InferenceFailure} naming the field
     * @param modelId
     *            the model id a request names
     */
    Endpoint(String path, BiFunction<ObjectMapper, byte[], R> parser, Function<R, String> modelId,
            Exchanges<R, E> exchanges) {
        this.path = path;
        this.parser = parser;
        this.modelId = modelId;
        this.exchanges = exchanges;
    }

    /** {@code POST} at the path (and at {@code others}) goes the gateway's way, ahead of JAX-RS. */
    void route(Router router, String... others) {
        List<String> paths = new ArrayList<>(List.of(others));
        paths.add(0, path);
        for (String each : paths) {
            router.route(HttpMethod.POST, each).order(-100).handler(context -> gateway.handle(context, this));
        }
    }

    /** The route template (metrics and logs). */
    String path() {
        return path;
    }

    R parse(byte[] body) {
        return parser.apply(json, body);
    }

    String model(R request) {
        return modelId.apply(request);
    }

    /**
     * Refuses a request the model cannot answer on this endpoint with an {@link InferenceFailure} (a model that does
     * not serve the endpoint at all: {@link InferenceFailure#endpointNotSupported}).
     */
    abstract void check(Backend backend, R request, String modelId);

    E exchange(RoutingContext context, R request, ServedModel model, InferenceCaller caller,
            Consumer<Outcome> onFinish) {
        return exchanges.of(context, request, model, caller, onFinish);
    }

    /** Starts the answer on the event loop; it must not block it. */
    abstract void answer(Backend backend, E exchange);
}

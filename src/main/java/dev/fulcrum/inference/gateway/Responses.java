package dev.fulcrum.inference.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.ext.web.Router;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ResponsesBackend;
import dev.fulcrum.inference.ResponsesExchange;
import dev.fulcrum.inference.ResponsesRequest;

/**
 * {@code POST /v1/responses}, OpenAI's Responses API, as described in {@code openapi/inference.yaml}, on the
 * {@link Gateway}'s path. A {@link ResponsesBackend} gets it as it is unless its server is known to lack the API;
 * otherwise, and for every other backend, it is bridged statelessly to a chat completion
 * ({@link ResponsesRequest#toChat}, {@link ResponsesExchange}).
 */
@ApplicationScoped
public class Responses extends Endpoint<ResponsesRequest, ResponsesExchange> {

    static final String PATH = "/v1/responses";

    public Responses() {
        super(PATH, ResponsesRequest::parse, ResponsesRequest::model, ResponsesExchange::new);
    }

    void routes(@Observes Router router) {
        route(router);
    }

    private static boolean passedThrough(Backend backend) {
        return backend instanceof ResponsesBackend upstream && upstream.mayHaveResponsesApi();
    }

    @Override
    void check(Backend backend, ResponsesRequest request, String modelId) {
        if (!passedThrough(backend)) {
            bridged(backend, request, modelId);
        }
    }

    /** The chat completion of the bridge, checked by the backend; failures name the Responses API's fields. */
    private ChatRequest bridged(Backend backend, ResponsesRequest request, String modelId) {
        ChatRequest chat = request.toChat(json);
        try {
            backend.check(chat, modelId);
        } catch (InferenceFailure failure) {
            if ("model_not_supported".equals(failure.code())) {
                throw InferenceFailure.endpointNotSupported(modelId, PATH);
            }
            throw ResponsesRequest.renamed(failure);
        }
        return chat;
    }

    @Override
    void answer(Backend backend, ResponsesExchange exchange) {
        if (passedThrough(backend)) {
            ((ResponsesBackend) backend).respond(exchange, () -> bridge(backend, exchange));
        } else {
            bridge(backend, exchange);
        }
    }

    private void bridge(Backend backend, ResponsesExchange exchange) {
        try {
            exchange.bridge(bridged(backend, exchange.responsesRequest(), exchange.model().id()));
        } catch (InferenceFailure failure) {
            exchange.fail(failure);
            exchange.finish(new Outcome(failure.status(), 0, 0));
            return;
        }
        backend.complete(exchange);
    }
}

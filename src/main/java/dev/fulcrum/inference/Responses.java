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
 * {@code POST /v1/responses}, OpenAI's Responses API, as described in {@code openapi/inference.yaml}, on the
 * {@link Gateway}'s path. An {@link OpenAiCompatibleBackend} gets it as it is unless its server is known to lack the
 * API; otherwise, and for every other backend, it is bridged statelessly to a chat completion
 * ({@link ResponsesRequest#toChat}, {@link ResponsesExchange}).
 */
@ApplicationScoped
public class Responses implements Endpoint<ResponsesRequest, ResponsesExchange> {

    static final String PATH = "/v1/responses";

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
    public ResponsesRequest parse(byte[] body) {
        return ResponsesRequest.parse(json, body);
    }

    @Override
    public String model(ResponsesRequest request) {
        return request.model();
    }

    private static boolean passedThrough(Backend backend) {
        return backend instanceof OpenAiCompatibleBackend upstream && upstream.mayHaveResponsesApi();
    }

    @Override
    public void check(Backend backend, ResponsesRequest request, String modelId) {
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
    public ResponsesExchange exchange(RoutingContext context, ResponsesRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        return new ResponsesExchange(context, request, model, caller, onFinish);
    }

    @Override
    public void answer(Backend backend, ResponsesExchange exchange) {
        if (passedThrough(backend)) {
            ((OpenAiCompatibleBackend) backend).respond(exchange, () -> bridge(backend, exchange));
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

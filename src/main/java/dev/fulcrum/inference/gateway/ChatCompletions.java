package dev.fulcrum.inference.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.core.Future;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceCaller;

/**
 * {@code POST /v1/chat/completions} (and with a trailing slash), as described in {@code openapi/inference.yaml}. A
 * Vert.x route rather than a JAX-RS resource: the body is kept as JSON (an upstream gets every field), the answer may
 * be a stream passed through as it arrives, and nothing on the way blocks the event loop. The path of the request (key,
 * project, quota, concurrency, usage, metrics, draining) is the {@link Gateway}'s.
 */
@ApplicationScoped
public class ChatCompletions extends Endpoint<ChatRequest, ChatExchange> {

    static final String PATH = "/v1/chat/completions";

    public ChatCompletions() {
        super(PATH, ChatRequest::parse, ChatRequest::model, ChatExchange::new);
    }

    void routes(@Observes Router router) {
        route(router, PATH + "/");
    }

    /** The project a completion is counted for: {@code Compat-Project} or {@code OpenAI-Project}. */
    static InferenceCallers.ProjectHeader project(HttpServerRequest request) {
        return Gateway.project(request);
    }

    /** The checks before anyone is asked who calls: the replica is not draining and the body has an allowed size. */
    boolean admit(RoutingContext context) {
        return gateway.admit(context);
    }

    /** The completion of an admitted request for the caller it resolves to (a console session's). */
    void complete(RoutingContext context, Future<InferenceCaller> caller, long started) {
        gateway.serve(context, this, caller, started);
    }

    @Override
    void check(Backend backend, ChatRequest request, String modelId) {
        backend.check(request, modelId);
    }

    @Override
    void answer(Backend backend, ChatExchange exchange) {
        backend.complete(exchange);
    }
}

package dev.fulcrum.inference;

import java.util.function.Consumer;

import io.vertx.ext.web.RoutingContext;

/**
 * One chat completion on its way: the checked request, the model, who it is counted for, and the client's response. Not
 * final: the Responses bridge ({@link ResponsesExchange}) turns what a backend writes into Responses events.
 */
public class ChatExchange extends Exchange {

    private final ChatRequest request;

    /**
     * How a request ended: the status answered (499 when the client went away) and the tokens used. Declared here,
     * where backends have always found it; every {@link Exchange} uses it.
     */
    public record Outcome(int status, int promptTokens, int completionTokens) {
    }

    ChatExchange(RoutingContext context, ChatRequest request, ServedModel model, InferenceCaller caller,
            Consumer<Outcome> onFinish) {
        super(context, model, caller, onFinish);
        this.request = request;
    }

    public ChatRequest request() {
        return request;
    }

    @Override
    public boolean stream() {
        return request.stream();
    }
}

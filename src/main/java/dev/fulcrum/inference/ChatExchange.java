package dev.fulcrum.inference;

import java.util.function.Consumer;

import io.vertx.core.Context;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * One chat completion on its way: the checked request, the model, who it is counted for, and the client's response. Not
 * final: the Responses bridge ({@link ResponsesExchange}) turns what a backend writes into Responses events.
 */
public class ChatExchange extends Exchange {

    private final ChatRequest request;

    public ChatExchange(RoutingContext context, ChatRequest request, ServedModel model, InferenceCaller caller,
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

    /**
     * Ends a completion that a local engine generated off the event loop, on the exchange's {@code context}: a stream
     * gets the usage chunk (when asked for) and its end, otherwise the client gets the whole completion of
     * {@code choices}; then the outcome is recorded.
     */
    public void endGenerated(Context context, String id, long created, JsonArray choices, int promptTokens,
            int completionTokens) {
        String modelId = model().id();
        JsonObject usage = new JsonObject().put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens).put("total_tokens", promptTokens + completionTokens);
        Outcome outcome = new Outcome(200, promptTokens, completionTokens);
        if (request().stream()) {
            context.runOnContext(v -> {
                if (request().includeUsage()) {
                    event(new JsonObject().put("id", id).put("object", "chat.completion.chunk").put("created", created)
                            .put("model", modelId).put("choices", new JsonArray()).put("usage", usage).encode());
                }
                done();
                finish(outcome);
            });
        } else {
            JsonObject completion = new JsonObject().put("id", id).put("object", "chat.completion")
                    .put("created", created).put("model", modelId).put("choices", choices).put("usage", usage);
            context.runOnContext(v -> {
                json(200, completion.toBuffer());
                finish(outcome);
            });
        }
    }
}

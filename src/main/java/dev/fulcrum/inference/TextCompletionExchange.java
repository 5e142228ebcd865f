package dev.fulcrum.inference;

import java.util.function.Consumer;

import io.vertx.core.Context;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.Exchange.Outcome;

/** One text completion on its way ({@code POST /v1/completions}); see {@link Exchange}. */
public final class TextCompletionExchange extends Exchange {

    private final TextCompletionRequest request;

    public TextCompletionExchange(RoutingContext context, TextCompletionRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        super(context, model, caller, onFinish);
        this.request = request;
    }

    public TextCompletionRequest request() {
        return request;
    }

    @Override
    public boolean stream() {
        return request.stream();
    }

    /**
     * A {@code text_completion} object as a local engine writes it: the whole answer ({@code usage} set) or one chunk
     * of a stream ({@code usage} null; {@code choices} one choice, or empty for the usage chunk).
     */
    public static JsonObject completion(String id, long created, String model, JsonArray choices, JsonObject usage) {
        JsonObject completion = new JsonObject().put("id", id).put("object", "text_completion").put("created", created)
                .put("model", model).put("choices", choices);
        return usage == null ? completion : completion.put("usage", usage);
    }

    /** One choice: its text, index, {@code logprobs} (null unless asked) and finish reason (null mid-stream). */
    public static JsonObject choice(int index, String text, JsonObject logprobs, String finishReason) {
        return new JsonObject().put("text", text).put("index", index).put("logprobs", logprobs).put("finish_reason",
                finishReason);
    }

    public static JsonObject usage(int promptTokens, int completionTokens) {
        return new JsonObject().put("prompt_tokens", promptTokens).put("completion_tokens", completionTokens)
                .put("total_tokens", promptTokens + completionTokens);
    }

    /** One streamed chunk of a choice's text ({@code finishReason} set on its last), with its tokens' logprobs. */
    public static String chunk(String id, long created, String model, int index, String text, JsonObject logprobs,
            String finishReason) {
        return completion(id, created, model, new JsonArray().add(choice(index, text, logprobs, finishReason)), null)
                .encode();
    }

    /**
     * Ends a local engine's completion on the request's event loop: the usage chunk (when asked) and the end of a
     * stream, or the whole answer.
     */
    public void endGenerated(Context context, String id, long created, JsonArray choices, int promptTokens,
            int completionTokens) {
        String modelId = model().id();
        JsonObject usage = usage(promptTokens, completionTokens);
        Outcome outcome = new Outcome(200, promptTokens, completionTokens);
        context.runOnContext(v -> {
            if (request.stream()) {
                if (request.includeUsage()) {
                    event(completion(id, created, modelId, new JsonArray(), usage).encode());
                }
                done();
            } else {
                json(200, completion(id, created, modelId, choices, usage).toBuffer());
            }
            finish(outcome);
        });
    }
}

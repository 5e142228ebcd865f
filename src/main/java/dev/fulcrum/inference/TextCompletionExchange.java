package dev.fulcrum.inference;

import java.util.UUID;
import java.util.function.Consumer;

import io.vertx.core.Context;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.ChatExchange.Outcome;

/** One text completion on its way ({@code POST /v1/completions}); see {@link Exchange}. */
public final class TextCompletionExchange extends Exchange {

    private final TextCompletionRequest request;

    TextCompletionExchange(RoutingContext context, TextCompletionRequest request, ServedModel model,
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
    static String chunk(String id, long created, String model, int index, String text, JsonObject logprobs,
            String finishReason) {
        return completion(id, created, model, new JsonArray().add(choice(index, text, logprobs, finishReason)), null)
                .encode();
    }

    /**
     * Ends a local engine's completion on the request's event loop: the usage chunk (when asked) and the end of a
     * stream, or the whole answer.
     */
    void endGenerated(Context context, String id, long created, JsonArray choices, int promptTokens,
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

    /**
     * What one choice of a local engine's text completion gave (its prompt's tokens, or 0 when counted already), and
     * the log probabilities of its tokens when asked (streamed: those not yet sent), else null.
     */
    record Continuation(String text, String finishReason, int promptTokens, int completionTokens, JsonObject logprobs) {
    }

    /** Where a streamed choice's pieces go, each with its tokens' log probabilities (null when not asked). */
    interface Pieces {
        void piece(String text, JsonObject logprobs);
    }

    /**
     * A local engine's text completion, one choice per turn ({@link LocalChoices}): choice {@code p * n + i} continues
     * prompt {@code p} with seed {@code seed + i}, as OpenAI orders them, streamed piece by piece (after the prompt,
     * with {@code echo}) or gathered into the answer; a prompt's tokens are counted once however many choices it has.
     */
    abstract static class LocalTextCompletion extends LocalChoices {

        private final TextCompletionExchange exchange;
        private final TextCompletionRequest request;
        private final String id = "cmpl-" + UUID.randomUUID().toString().replace("-", "");
        private final long created = System.currentTimeMillis() / 1000;
        private final JsonArray choices = new JsonArray();
        private int promptTokens;
        private int completionTokens;

        LocalTextCompletion(TextCompletionExchange exchange) {
            super(exchange, exchange.request().prompts().size() * exchange.request().n());
            this.exchange = exchange;
            this.request = exchange.request();
        }

        /** Loads the engine's model, in the first turn. */
        abstract void load();

        /**
         * Continues {@code prompt} as choice {@code i} of its {@code n} (seed {@code seed + i}), giving each piece to
         * {@code onPiece} when not null; counts the prompt's tokens when {@code i} is 0.
         */
        abstract Continuation continueText(String prompt, int i, Pieces onPiece);

        @Override
        final void start() {
            load();
            if (request.stream()) {
                context().runOnContext(v -> exchange.startStream());
            }
        }

        @Override
        final void generate(int index) {
            String prompt = request.prompts().get(index / request.n());
            int i = index % request.n();
            String modelId = exchange.model().id();
            if (request.stream() && request.echo()) {
                emit(chunk(id, created, modelId, index, prompt, null, null));
            }
            Continuation continued = continueText(prompt, i,
                    request.stream()
                            ? (piece, logprobs) -> emit(chunk(id, created, modelId, index, piece, logprobs, null))
                            : null);
            if (i == 0) {
                promptTokens += continued.promptTokens();
            }
            completionTokens += continued.completionTokens();
            if (request.stream()) {
                emit(chunk(id, created, modelId, index, "", continued.logprobs(), continued.finishReason()));
            } else {
                choices.add(choice(index, request.echo() ? prompt + continued.text() : continued.text(),
                        continued.logprobs(), continued.finishReason()));
            }
        }

        @Override
        final void end() {
            exchange.endGenerated(context(), id, created, choices, promptTokens, completionTokens);
        }
    }
}

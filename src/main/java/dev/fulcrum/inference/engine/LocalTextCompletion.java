package dev.fulcrum.inference.engine;

import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;

/**
 * A local engine's text completion, one choice per turn ({@link LocalChoices}): choice {@code p * n + i} continues
 * prompt {@code p} with seed {@code seed + i}, as OpenAI orders them, streamed piece by piece (after the prompt, with
 * {@code echo}) or gathered into the answer; a prompt's tokens are counted once however many choices it has.
 */
public abstract class LocalTextCompletion extends LocalChoices {

    private final TextCompletionExchange exchange;
    private final TextCompletionRequest request;
    private final String id = "cmpl-" + UUID.randomUUID().toString().replace("-", "");
    private final long created = System.currentTimeMillis() / 1000;
    private final JsonArray choices = new JsonArray();
    private int promptTokens;
    private int completionTokens;

    /**
     * What one choice gave (its prompt's tokens, or 0 when counted already), and the log probabilities of its tokens
     * when asked (streamed: those not yet sent), else null.
     */
    public record Continuation(String text, String finishReason, int promptTokens, int completionTokens,
            JsonObject logprobs) {
    }

    /** Where a streamed choice's pieces go, each with its tokens' log probabilities (null when not asked). */
    public interface Pieces {
        void piece(String text, JsonObject logprobs);
    }

    /**
     * Refuses what no local engine honours in a text completion ({@code suffix}, {@code best_of} other than {@code n}),
     * token prompts when the engine has no tokenizer of its own ({@code tokens} false), a {@code max_tokens} out of 1
     * to {@code maxTokens} (0 is the prompt alone, with {@code echo}, for an engine that {@code scores} prompts), and
     * the fields its {@link ChatFields} leave out ({@code logit_bias}, penalties). Runs on the event loop.
     */
    public static void check(TextCompletionRequest request, ChatFields fields, boolean tokens, int maxTokens,
            String modelId, boolean scores) {
        if (request.prompts() == null && !tokens) {
            throw InferenceFailure.invalid("prompt", "The model '" + modelId
                    + "' takes text prompts only: token arrays of other tokenizers mean nothing to it");
        }
        int asked = request.maxTokensOrDefault();
        if (asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge("max_tokens", asked, maxTokens, modelId);
        }
        if (asked < 1 && !(scores && request.echo())) {
            throw InferenceFailure.invalid("max_tokens",
                    scores ? "'max_tokens' 0 asks for the prompt alone: it needs 'echo' (the model '" + modelId
                            + "' then scores the prompt with 'logprobs')"
                            : "'max_tokens' must be at least 1 for the model '" + modelId + "'");
        }
        if (request.echo() && request.logprobs() != null && !scores) {
            throw InferenceFailure.invalid("logprobs",
                    "'logprobs' with 'echo' is not supported by the model '" + modelId + "': ask for one or the other");
        }
        // suffix would need infill, which only fill-in-the-middle models have
        if (request.suffix() != null) {
            throw InferenceFailure.unsupported("suffix", modelId);
        }
        JsonNode bestOf = request.body().get("best_of");
        if (bestOf != null && !bestOf.isNull() && bestOf.asInt() != request.n()) {
            throw InferenceFailure.unsupported("best_of", modelId);
        }
        LocalChatCompletion.checkFields(request.body(), fields, modelId);
    }

    protected LocalTextCompletion(TextCompletionExchange exchange) {
        super(exchange, exchange.request().promptCount() * exchange.request().n());
        this.exchange = exchange;
        this.request = exchange.request();
    }

    /** Loads the engine's model, in the first turn. */
    protected abstract void load();

    /**
     * Continues prompt {@code prompt} (its index in the request) as choice {@code i} of its {@code n} (seed
     * {@code seed + i}), giving each piece to {@code onPiece} when not null; counts the prompt's tokens when {@code i}
     * is 0.
     */
    protected abstract Continuation continueText(int prompt, int i, Pieces onPiece);

    /**
     * Whether this request's prompts are scored ({@code echo} with {@code logprobs}): the engine then gives the echoed
     * prompt as the first piece of a streamed choice, with its tokens' log probabilities, and puts them first in the
     * choice's {@code logprobs}.
     */
    protected boolean scoresPrompt() {
        return false;
    }

    /** The text of prompt {@code prompt}, echoed with {@code echo}: as sent, or its tokens' text. */
    protected String promptText(int prompt) {
        return request.prompts().get(prompt);
    }

    @Override
    protected final void start() {
        load();
        if (request.stream()) {
            context().runOnContext(v -> exchange.startStream());
        }
    }

    @Override
    protected final void generate(int index) {
        int prompt = index / request.n();
        int i = index % request.n();
        String modelId = exchange.model().id();
        if (request.stream() && request.echo() && !scoresPrompt()) {
            emit(TextCompletionExchange.chunk(id, created, modelId, index, promptText(prompt), null, null));
        }
        Continuation continued = continueText(prompt, i,
                request.stream()
                        ? (piece, logprobs) -> emit(
                                TextCompletionExchange.chunk(id, created, modelId, index, piece, logprobs, null))
                        : null);
        if (i == 0) {
            promptTokens += continued.promptTokens();
        }
        completionTokens += continued.completionTokens();
        if (request.stream()) {
            emit(TextCompletionExchange.chunk(id, created, modelId, index, "", continued.logprobs(),
                    continued.finishReason()));
        } else {
            choices.add(TextCompletionExchange.choice(index,
                    request.echo() ? promptText(prompt) + continued.text() : continued.text(), continued.logprobs(),
                    continued.finishReason()));
        }
    }

    @Override
    protected final void end() {
        exchange.endGenerated(context(), id, created, choices, promptTokens, completionTokens);
    }
}

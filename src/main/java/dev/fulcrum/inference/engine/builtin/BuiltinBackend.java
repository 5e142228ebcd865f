package dev.fulcrum.inference.engine.builtin;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionBackend;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;
import dev.fulcrum.inference.engine.ChatFields;
import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.LocalChatCompletion;
import dev.fulcrum.inference.engine.LocalChatModel;
import dev.fulcrum.inference.engine.LocalChoices;
import dev.fulcrum.inference.engine.LocalLogprobs;
import dev.fulcrum.inference.engine.LocalTextCompletion;
import dev.fulcrum.inference.engine.LocalTextCompletion.Continuation;
import dev.fulcrum.inference.engine.LocalTextCompletion.Pieces;
import dev.fulcrum.inference.engine.LoggedToken;
import dev.fulcrum.platform.errors.ApiException.Kind;
import dev.fulcrum.tiny.BuiltinModel;
import dev.fulcrum.tiny.ChatTurn;
import dev.fulcrum.tiny.FinishReason;
import dev.fulcrum.tiny.Generation;
import dev.fulcrum.tiny.Logprobs;
import dev.fulcrum.tiny.Sampling;
import dev.fulcrum.tiny.TokenLogprob;

/**
 * The built-in model as a backend. Generation is CPU-bound, so it runs on its own worker threads, never on the event
 * loop; streamed pieces go back to the request's event loop in order. {@code n} choices are generated one after the
 * other, choice {@code i} with seed {@code seed + i}, each in a turn of its own on the threads ({@link LocalChoices}).
 * Closing the connection stops the generation before its next token. A request may ask for at most {@code max-tokens}
 * per choice and {@code max-total-tokens} in all; the threads are shared fairly between projects
 * ({@link BuiltinWorkers}). Text completions continue the prompt's bytes without the chat template, with the same
 * limits ({@code max_tokens} defaulting to 16 there, as OpenAI's).
 */
public final class BuiltinBackend implements LocalChatModel, TextCompletionBackend {

    /** The built-in model reads messages and samples; it knows no tools, schemas, biases or penalties. */
    private static final ChatFields FIELDS = new ChatFields(false, false, false, false);

    private static final Logger LOG = Logger.getLogger(BuiltinBackend.class);

    private final Supplier<BuiltinModel> model;
    private final FairExecutor workers;
    private final int defaultMaxTokens;
    private final int maxTokens;
    private final int maxTotalTokens;

    public BuiltinBackend(Supplier<BuiltinModel> model, BuiltinWorkers workers, InferenceConfig.Builtin limits) {
        this.model = model;
        this.workers = workers.executor();
        this.defaultMaxTokens = Math.min(limits.defaultMaxTokens(), limits.maxTokens());
        this.maxTokens = limits.maxTokens();
        this.maxTotalTokens = limits.maxTotalTokens();
    }

    /** Tokens one choice of the request may generate: as asked, or the default within max-total-tokens / n. */
    int choiceTokens(ChatRequest request) {
        return request.maxTokens() != null ? request.maxTokens()
                : Math.min(defaultMaxTokens, maxTotalTokens / request.n());
    }

    @Override
    public ChatFields fields() {
        return FIELDS;
    }

    @Override
    public FairExecutor workers() {
        return workers;
    }

    @Override
    public int maxTokens() {
        return maxTokens;
    }

    @Override
    public void check(ChatRequest request, ChatPrompt prompt, String modelId) {
        Integer asked = request.maxTokens();
        if ((long) request.n() * choiceTokens(request) > maxTotalTokens || choiceTokens(request) < 1) {
            throw InferenceFailure.invalid("n",
                    "n * " + request.maxTokensParam() + " is too large: " + request.n() + " * "
                            + (asked != null ? asked : 1) + ". The model '" + modelId + "' generates at most "
                            + maxTotalTokens + " tokens per request in all its choices.");
        }
    }

    /** The conversation of the messages, generated from by the model the request was answered with. */
    @Override
    public LocalChatModel.Prompt open(ChatRequest request, ChatPrompt prompt, String modelId) {
        BuiltinModel builtin = model.get();
        List<ChatTurn> conversation = new ArrayList<>();
        for (Object message : prompt.messages()) {
            JsonObject turn = (JsonObject) message;
            conversation.add(new ChatTurn(turn.getString("role"), turn.getString("content")));
        }
        int[] tokens = builtin.encodePrompt(conversation);
        return new LocalChatModel.Prompt() {
            @Override
            public int tokens() {
                return tokens.length;
            }

            @Override
            public LocalChatModel.Generated generate(int choice, LocalLogprobs logprobs, Consumer<String> onPiece,
                    Exchange exchange) {
                Long seed = request.seed() == null ? null : request.seed() + choice;
                Sampling sampling = new Sampling(request.temperature() == null ? 1.0 : request.temperature(),
                        request.topP() == null ? 1.0 : request.topP(), choiceTokens(request), request.stop(), seed);
                Logprobs recorded = logprobs == null ? null : new Logprobs(LocalChatCompletion.topLogprobs(request));
                Generation generation = builtin.generate(tokens, sampling, piece -> {
                    logged(recorded, logprobs);
                    if (onPiece != null) {
                        onPiece.accept(piece);
                    }
                    return !exchange.cancelled();
                }, recorded);
                logged(recorded, logprobs);
                return new LocalChatModel.Generated(generation.text(), reason(generation.finishReason()),
                        generation.completionTokens());
            }

            @Override
            public void close() {
            }
        };
    }

    /** Moves the tokens the model recorded since the last call into the answer's log probabilities. */
    private static void logged(Logprobs recorded, LocalLogprobs logprobs) {
        if (recorded != null) {
            for (TokenLogprob token : recorded.takeNew()) {
                logprobs.add(logged(token));
            }
        }
    }

    private static LoggedToken logged(TokenLogprob token) {
        List<LoggedToken> top = new ArrayList<>(token.top().size());
        for (TokenLogprob alternative : token.top()) {
            top.add(logged(alternative));
        }
        return new LoggedToken(bytes(token), token.logprob(), top);
    }

    /** A token's bytes; the end of the turn, which is no text, as its name. */
    private static byte[] bytes(TokenLogprob token) {
        List<Integer> bytes = token.bytes();
        if (bytes == null) {
            return TokenLogprob.END_TEXT.getBytes(StandardCharsets.UTF_8);
        }
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) (int) bytes.get(i);
        }
        return out;
    }

    @Override
    public InferenceFailure failed(String modelId, Throwable e) {
        LOG.errorf(e, "The built-in model failed (model %s)", modelId);
        return new InferenceFailure(Kind.FAILED, "The built-in model failed", null, null, null);
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        LocalTextCompletion.check(request, FIELDS, false, maxTokens, modelId, false);
        long choices = (long) request.prompts().size() * request.n();
        if (choices * request.maxTokensOrDefault() > maxTotalTokens) {
            throw InferenceFailure.invalid("n",
                    "prompts * n * max_tokens is too large: " + choices + " * " + request.maxTokensOrDefault()
                            + ". The model '" + modelId + "' generates at most " + maxTotalTokens
                            + " tokens per request in all its choices.");
        }
        if (request.logprobs() != null) {
            throw InferenceFailure.unsupported("logprobs", modelId);
        }
    }

    @Override
    public void complete(TextCompletionExchange exchange) {
        TextCompletionRequest request = exchange.request();
        new LocalTextCompletion(exchange) {

            private BuiltinModel builtin;

            @Override
            protected void load() {
                builtin = model.get();
            }

            /** Continues the prompt's bytes (no chat template) with seed {@code seed + i}. */
            @Override
            protected Continuation continueText(int index, int i, Pieces onPiece) {
                String prompt = request.prompts().get(index);
                Long seed = request.seed() == null ? null : request.seed() + i;
                Sampling sampling = new Sampling(request.temperature() == null ? 1.0 : request.temperature(),
                        request.topP() == null ? 1.0 : request.topP(), request.maxTokensOrDefault(), request.stop(),
                        seed);
                Generation generation = builtin.continueText(prompt, sampling, piece -> {
                    if (onPiece != null) {
                        onPiece.piece(piece, null);
                    }
                    return !exchange.cancelled();
                }, null);
                return new Continuation(generation.text(), reason(generation.finishReason()), generation.promptTokens(),
                        generation.completionTokens(), null);
            }

            @Override
            protected InferenceFailure failed(Throwable e) {
                return BuiltinBackend.this.failed(exchange.model().id(), e);
            }
        }.queueOn(workers);
    }

    private static String reason(FinishReason reason) {
        return reason == FinishReason.LENGTH ? "length" : "stop";
    }
}

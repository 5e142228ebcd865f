package dev.fulcrum.inference;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.builtin.BuiltinModel;
import dev.fulcrum.inference.builtin.ChatTurn;
import dev.fulcrum.inference.builtin.FinishReason;
import dev.fulcrum.inference.builtin.Generation;
import dev.fulcrum.inference.builtin.Logprobs;
import dev.fulcrum.inference.builtin.Sampling;
import dev.fulcrum.inference.builtin.TokenLogprob;

/**
 * The built-in model as a backend. Generation is CPU-bound, so it runs on its own worker threads, never on the event
 * loop; streamed pieces go back to the request's event loop in order. {@code n} choices are generated one after the
 * other, choice {@code i} with seed {@code seed + i}, each in a turn of its own on the threads ({@link LocalChoices}).
 * Closing the connection stops the generation before its next token. A request may ask for at most {@code max-tokens}
 * per choice and {@code max-total-tokens} in all; the threads are shared fairly between projects
 * ({@link BuiltinWorkers}). Text completions continue the prompt's bytes without the chat template, with the same
 * limits ({@code max_tokens} defaulting to 16 there, as OpenAI's).
 */
public final class BuiltinBackend implements Backend, TextCompletionBackend {

    private static final Logger LOG = Logger.getLogger(BuiltinBackend.class);
    private static final List<String> ROLES = List.of("system", "developer", "user", "assistant");

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
    int maxTokens(ChatRequest request) {
        return request.maxTokens() != null ? request.maxTokens()
                : Math.min(defaultMaxTokens, maxTotalTokens / request.n());
    }

    @Override
    public String type() {
        return "llm";
    }

    @Override
    public void check(ChatRequest request, String modelId) {
        Integer asked = request.maxTokens();
        if (asked != null && asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge(request.maxTokensParam(), asked, maxTokens, modelId);
        }
        if ((long) request.n() * maxTokens(request) > maxTotalTokens || maxTokens(request) < 1) {
            throw InferenceFailure.invalid("n",
                    "n * " + request.maxTokensParam() + " is too large: " + request.n() + " * "
                            + (asked != null ? asked : 1) + ". The model '" + modelId + "' generates at most "
                            + maxTotalTokens + " tokens per request in all its choices.");
        }
        JsonNode top = request.body().get("top_logprobs");
        if (top != null && !top.isNull() && !logprobs(request)) {
            throw InferenceFailure.invalid("top_logprobs", "'top_logprobs' requires 'logprobs': true");
        }
        for (String field : List.of("tools", "logit_bias")) {
            JsonNode value = request.body().get(field);
            boolean set = value != null && !value.isNull() && !(value.isBoolean() && !value.asBoolean())
                    && !(value.isContainerNode() && value.isEmpty());
            if (set) {
                throw InferenceFailure.unsupported(field, modelId);
            }
        }
        JsonNode toolChoice = request.body().get("tool_choice");
        if (toolChoice != null && !toolChoice.isNull() && !"none".equals(toolChoice.asText(null))) {
            throw InferenceFailure.unsupported("tool_choice", modelId);
        }
        JsonNode format = request.body().get("response_format");
        if (format != null && !format.isNull() && !"text".equals(format.path("type").asText())) {
            throw InferenceFailure.unsupported("response_format", modelId);
        }
        for (String penalty : List.of("presence_penalty", "frequency_penalty")) {
            JsonNode value = request.body().get(penalty);
            if (value != null && !value.isNull() && value.asDouble() != 0) {
                throw InferenceFailure.unsupported(penalty, modelId);
            }
        }
        for (int i = 0; i < request.messages().size(); i++) {
            JsonNode message = request.messages().get(i);
            if (!ROLES.contains(message.path("role").asText())) {
                throw InferenceFailure.unsupported("messages[" + i + "].role", modelId);
            }
            JsonNode content = message.get("content");
            if (content != null && !content.isNull() && !content.isTextual()) {
                throw InferenceFailure.unsupported("messages[" + i + "].content", modelId);
            }
        }
    }

    /** Whether the request asks for the log-probabilities of the answer's tokens. */
    private static boolean logprobs(ChatRequest request) {
        return request.body().path("logprobs").asBoolean(false);
    }

    /** What the request's logprobs and top_logprobs ask to record, or null for nothing. */
    private static Logprobs logprobsOf(ChatRequest request) {
        return logprobs(request) ? new Logprobs(request.body().path("top_logprobs").asInt(0)) : null;
    }

    /**
     * The {@code logprobs} of a choice or chunk: {@code {"content": [...]}} as OpenAI writes it, null when not asked.
     */
    private static JsonObject logprobsJson(List<TokenLogprob> tokens) {
        JsonArray content = new JsonArray();
        for (TokenLogprob token : tokens) {
            JsonArray top = new JsonArray();
            for (TokenLogprob alternative : token.top()) {
                top.add(tokenJson(alternative));
            }
            content.add(tokenJson(token).put("top_logprobs", top));
        }
        return new JsonObject().put("content", content);
    }

    private static JsonObject tokenJson(TokenLogprob token) {
        List<Integer> bytes = token.bytes();
        return new JsonObject().put("token", token.text()).put("logprob", token.logprob()).put("bytes",
                bytes == null ? null : new JsonArray(new ArrayList<>(bytes)));
    }

    @Override
    public void complete(ChatExchange exchange) {
        new ChatChoices(exchange).queueOn(workers);
    }

    /** A chat completion's {@code n} choices, one per turn: choice {@code i} with seed {@code seed + i}. */
    private final class ChatChoices extends LocalChoices {

        private final ChatExchange exchange;
        private final ChatRequest request;
        private final String id = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
        private final long created = System.currentTimeMillis() / 1000;
        private final List<ChatTurn> conversation = new ArrayList<>();
        private final JsonArray choices = new JsonArray();
        private BuiltinModel builtin;
        private int promptTokens;
        private int completionTokens;

        ChatChoices(ChatExchange exchange) {
            super(exchange, exchange.request().n());
            this.exchange = exchange;
            this.request = exchange.request();
        }

        @Override
        void start() {
            for (JsonNode message : request.messages()) {
                conversation.add(new ChatTurn(message.path("role").asText(), message.path("content").asText("")));
            }
            builtin = model.get();
            if (request.stream()) {
                context().runOnContext(v -> exchange.startStream());
            }
        }

        @Override
        void generate(int index) {
            String modelId = exchange.model().id();
            Long seed = request.seed() == null ? null : request.seed() + index;
            Sampling sampling = new Sampling(request.temperature() == null ? 1.0 : request.temperature(),
                    request.topP() == null ? 1.0 : request.topP(), maxTokens(request), request.stop(), seed);
            Logprobs logprobs = logprobsOf(request);
            Generation generation;
            if (request.stream()) {
                JsonObject role = new JsonObject().put("role", "assistant").put("content", "");
                emit(chunk(id, created, modelId, index, role, null, null));
                generation = builtin.generate(conversation, sampling, piece -> {
                    emit(chunk(id, created, modelId, index, new JsonObject().put("content", piece),
                            logprobs == null ? null : logprobsJson(logprobs.takeNew()), null));
                    return !exchange.cancelled();
                }, logprobs);
                emit(chunk(id, created, modelId, index, new JsonObject(), null, reason(generation.finishReason())));
            } else {
                generation = builtin.generate(conversation, sampling, piece -> !exchange.cancelled(), logprobs);
                choices.add(new JsonObject().put("index", index)
                        .put("message", new JsonObject().put("role", "assistant").put("content", generation.text()))
                        .put("logprobs", logprobs == null ? null : logprobsJson(logprobs.all()))
                        .put("finish_reason", reason(generation.finishReason())));
            }
            promptTokens = generation.promptTokens();
            completionTokens += generation.completionTokens();
        }

        @Override
        void end() {
            exchange.endGenerated(context(), id, created, choices, promptTokens, completionTokens);
        }

        @Override
        InferenceFailure failed(Throwable e) {
            return BuiltinBackend.failed(exchange, e);
        }
    }

    /** A failure of the built-in model: logged, and a 500 (not what failed inside it). */
    private static InferenceFailure failed(Exchange exchange, Throwable e) {
        LOG.errorf(e, "The built-in model failed (model %s)", exchange.model().id());
        return new InferenceFailure(500, "The built-in model failed", null, null, null);
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        if (request.prompts() == null) {
            throw InferenceFailure.invalid("prompt", "The model '" + modelId
                    + "' takes text prompts only: token arrays of other tokenizers mean nothing to it");
        }
        int asked = request.maxTokensOrDefault();
        if (asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge("max_tokens", asked, maxTokens, modelId);
        }
        if (asked < 1) {
            throw InferenceFailure.invalid("max_tokens",
                    "'max_tokens' must be at least 1 for the model '" + modelId + "'");
        }
        long choices = (long) request.prompts().size() * request.n();
        if (choices * asked > maxTotalTokens) {
            throw InferenceFailure.invalid("n",
                    "prompts * n * max_tokens is too large: " + choices + " * " + asked + ". The model '" + modelId
                            + "' generates at most " + maxTotalTokens + " tokens per request in all its choices.");
        }
        if (request.logprobs() != null) {
            throw InferenceFailure.unsupported("logprobs", modelId);
        }
        if (request.suffix() != null) {
            throw InferenceFailure.unsupported("suffix", modelId);
        }
        JsonNode bestOf = request.body().get("best_of");
        if (bestOf != null && !bestOf.isNull() && bestOf.asInt() != request.n()) {
            throw InferenceFailure.unsupported("best_of", modelId);
        }
        JsonNode bias = request.body().get("logit_bias");
        if (bias != null && !bias.isNull() && !bias.isEmpty()) {
            throw InferenceFailure.unsupported("logit_bias", modelId);
        }
        for (String penalty : List.of("presence_penalty", "frequency_penalty")) {
            JsonNode value = request.body().get(penalty);
            if (value != null && !value.isNull() && value.asDouble() != 0) {
                throw InferenceFailure.unsupported(penalty, modelId);
            }
        }
    }

    @Override
    public void complete(TextCompletionExchange exchange) {
        TextCompletionRequest request = exchange.request();
        new TextCompletionExchange.LocalTextCompletion(exchange) {

            private BuiltinModel builtin;

            @Override
            void load() {
                builtin = model.get();
            }

            /** Continues the prompt's bytes (no chat template) with seed {@code seed + i}. */
            @Override
            TextCompletionExchange.Continuation continueText(String prompt, int i,
                    TextCompletionExchange.Pieces onPiece) {
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
                return new TextCompletionExchange.Continuation(generation.text(), reason(generation.finishReason()),
                        generation.promptTokens(), generation.completionTokens(), null);
            }

            @Override
            InferenceFailure failed(Throwable e) {
                return BuiltinBackend.failed(exchange, e);
            }
        }.queueOn(workers);
    }

    private static String chunk(String id, long created, String model, int index, JsonObject delta, JsonObject logprobs,
            String finishReason) {
        JsonObject choice = new JsonObject().put("index", index).put("delta", delta).put("logprobs", logprobs)
                .put("finish_reason", finishReason);
        return new JsonObject().put("id", id).put("object", "chat.completion.chunk").put("created", created)
                .put("model", model).put("choices", new JsonArray().add(choice)).encode();
    }

    private static String reason(FinishReason reason) {
        return reason == FinishReason.LENGTH ? "length" : "stop";
    }
}

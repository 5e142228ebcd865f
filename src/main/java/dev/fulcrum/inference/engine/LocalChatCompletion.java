package dev.fulcrum.inference.engine;

import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.ChatPrompt.ToolMode;
import dev.fulcrum.inference.engine.format.AnswerReader;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;
import dev.fulcrum.inference.engine.format.ReplyStream;

/**
 * A local engine's chat completion in OpenAI's shapes, the same for every local engine ({@link LocalChatModel}):
 * {@code n} choices, one per turn ({@link LocalChoices}), choice {@code i} sampled with seed {@code seed + i}; the
 * prompt rendered and tokenized once. Each answer reads in the model's chat format ({@link AnswerReader}): content,
 * reasoning and tool calls, streamed as deltas as they are generated ({@link ReplyStream}) where a grammar held the
 * calls to the format; calls no grammar held come whole at the end, once checked ({@link ToolCalls}).
 */
public final class LocalChatCompletion extends LocalChoices {

    /** The most {@code top_logprobs} a request may ask for, as OpenAI allows. */
    public static final int MAX_TOP_LOGPROBS = 20;

    private final LocalChatModel model;
    private final ChatExchange exchange;
    private final ChatRequest request;
    private final String modelId;
    private final String completionId = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
    private final long created = System.currentTimeMillis() / 1000;
    private final JsonArray choices = new JsonArray();
    private final boolean logprobs;
    private ChatPrompt chat;
    private LocalChatModel.Prompt prompt;
    private int completionTokens;

    public LocalChatCompletion(LocalChatModel model, ChatExchange exchange) {
        super(exchange, exchange.request().n());
        this.model = model;
        this.exchange = exchange;
        this.request = exchange.request();
        this.modelId = exchange.model().id();
        this.logprobs = request.body().path("logprobs").asBoolean(false);
    }

    /**
     * Refuses, on the event loop, what the engine cannot honour: malformed {@code logprobs}, the fields its
     * {@link ChatFields} leave out, messages and tools it cannot read, then the engine's own limits.
     */
    public static void check(LocalChatModel model, ChatRequest request, String modelId) {
        JsonNode logprobs = request.body().get("logprobs");
        if (logprobs != null && !logprobs.isNull() && !logprobs.isBoolean()) {
            throw InferenceFailure.invalid("logprobs", "'logprobs' must be a boolean");
        }
        JsonNode top = request.body().get("top_logprobs");
        if (top != null && !top.isNull()) {
            if (!top.canConvertToInt() || !ChatRequest.wholeNumber(top) || top.asInt() < 0
                    || top.asInt() > MAX_TOP_LOGPROBS) {
                throw InferenceFailure.invalid("top_logprobs",
                        "'top_logprobs' must be an integer from 0 to " + MAX_TOP_LOGPROBS);
            }
            if (!request.body().path("logprobs").asBoolean(false)) {
                throw InferenceFailure.invalid("top_logprobs", "'top_logprobs' requires 'logprobs': true");
            }
        }
        Integer asked = request.maxTokens();
        if (asked != null && asked > model.maxTokens()) {
            throw InferenceFailure.maxTokensTooLarge(request.maxTokensParam(), asked, model.maxTokens(), modelId);
        }
        checkFields(request.body(), model.fields(), modelId);
        model.check(request, prompt(model, request, modelId), modelId);
    }

    /** The request's prompt for {@code model}, made once for the check and the generation. */
    private static ChatPrompt prompt(LocalChatModel model, ChatRequest request, String modelId) {
        return request.derived().get(ChatPrompt.class, () -> ChatPrompt.of(request, model.fields(), modelId));
    }

    /** Refuses {@code logit_bias} and penalties that ask for something when the engine's fields leave them out. */
    static void checkFields(JsonNode body, ChatFields fields, String modelId) {
        JsonNode bias = body.get("logit_bias");
        if (!fields.logitBias() && bias != null && !bias.isNull() && !bias.isEmpty()) {
            throw InferenceFailure.unsupported("logit_bias", modelId);
        }
        for (String penalty : new String[] { "presence_penalty", "frequency_penalty" }) {
            JsonNode value = body.get(penalty);
            if (!fields.penalties() && value != null && !value.isNull() && value.asDouble() != 0) {
                throw InferenceFailure.unsupported(penalty, modelId);
            }
        }
    }

    /** The {@code top_logprobs} a request asks for (0 when it does not). */
    public static int topLogprobs(ChatRequest request) {
        return request.body().path("top_logprobs").asInt(0);
    }

    @Override
    protected void start() {
        chat = prompt(model, request, modelId);
        prompt = hold(model.open(request, chat, modelId));
        if (request.stream()) {
            context().runOnContext(v -> exchange.startStream());
        }
    }

    @Override
    protected void generate(int index) {
        AnswerReader reader = prompt.reader();
        boolean forced = chat.toolMode() == ToolMode.FORCED;
        // calls that no grammar held to the format are checked whole at the end, so they cannot stream
        boolean live = request.stream() && (!reader.reading().calls() || reader.constrained());
        if (request.stream()) {
            emit(chunk(index, new JsonObject().put("role", "assistant").put("content", forced ? null : ""), null,
                    null));
        }
        LocalLogprobs recorded = logprobs ? new LocalLogprobs() : null;
        ReplyStream stream = request.stream() ? new ReplyStream(reader) : null;
        LocalChatModel.Generated generated = prompt.generate(index, recorded,
                live ? piece -> stream.add(piece).forEach(delta -> emit(chunk(index, delta, taken(recorded), null)))
                        : null,
                exchange);
        Reply reply = ToolCalls.reply(reader, generated.text(), chat);
        boolean called = !reply.calls().isEmpty();
        String finishReason = called && "stop".equals(generated.finishReason()) ? "tool_calls"
                : generated.finishReason();
        completionTokens += generated.completionTokens();
        if (request.stream()) {
            for (JsonObject delta : stream.finish(reply)) {
                emit(chunk(index, delta, taken(recorded), null));
            }
            emit(chunk(index, new JsonObject(), taken(recorded), finishReason));
        } else {
            // an empty answer is empty text, as before formats read answers; a call's message has no text
            String content = reply.content() == null && reply.reasoning() == null && !called && !forced ? ""
                    : reply.content();
            JsonObject message = new JsonObject().put("role", "assistant").put("content", content).putNull("refusal");
            if (reply.reasoning() != null) {
                message.put("reasoning_content", reply.reasoning());
            }
            if (called) {
                message.put("tool_calls", reader.toolCalls(reply.calls(), List.of()));
            }
            choices.add(new JsonObject().put("index", index).put("message", message)
                    .put("logprobs", recorded == null ? null : recorded.chat()).put("finish_reason", finishReason));
        }
    }

    /** The log probabilities not yet sent (empty content when there are none), or null when not asked. */
    private static JsonObject taken(LocalLogprobs recorded) {
        return recorded == null ? null : recorded.takeChat();
    }

    private String chunk(int index, JsonObject delta, JsonObject logprobs, String finishReason) {
        JsonObject choice = new JsonObject().put("index", index).put("delta", delta).put("logprobs", logprobs)
                .put("finish_reason", finishReason);
        return new JsonObject().put("id", completionId).put("object", "chat.completion.chunk").put("created", created)
                .put("model", modelId).put("choices", new JsonArray().add(choice)).encode();
    }

    @Override
    protected void end() {
        exchange.endGenerated(context(), completionId, created, choices, prompt.tokens(), completionTokens);
    }

    @Override
    protected InferenceFailure failed(Throwable e) {
        return model.failed(modelId, e);
    }
}

package dev.fulcrum.inference;

import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.GgufToolCalls.Answer;
import dev.fulcrum.inference.engine.llama.ChatTemplate;
import dev.fulcrum.inference.engine.llama.LlamaEngine;
import dev.fulcrum.inference.engine.llama.Sampling;

/**
 * A GGUF model's chat completion of {@code n} choices, one per turn ({@link LocalChoices}): the prompt is the
 * template's, rendered and tokenized once; choice {@code i} samples with seed {@code seed + i}. Text streams token by
 * token; a forced tool call's JSON, and an answer that may hold calls ({@code tool_choice} auto), come whole at the
 * end.
 */
final class GgufChatChoices extends LocalChoices {

    private final GgufBackend backend;
    private final ChatExchange exchange;
    private final ChatRequest request;
    private final String modelId;
    private final String completionId = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
    private final long created = System.currentTimeMillis() / 1000;
    private final JsonArray choices = new JsonArray();
    private final boolean logprobs;
    private final int topLogprobs;
    private LlamaEngine.Lease lease;
    private int[] prompt;
    /** The tokens a choice may generate: the request's limit, at most what the prompt leaves of the context. */
    private int limit;
    private String grammar;
    private List<String> triggers = List.of();
    /** A forced call: the answer is the call's JSON under the grammar. */
    private boolean toolCall;
    /** The tools with tool_choice auto on a free answer, or null. */
    private JsonArray autoTools;
    private int completionTokens;

    GgufChatChoices(GgufBackend backend, ChatExchange exchange) {
        super(exchange, exchange.request().n());
        this.backend = backend;
        this.exchange = exchange;
        this.request = exchange.request();
        this.modelId = exchange.model().id();
        this.logprobs = request.body().path("logprobs").asBoolean(false);
        this.topLogprobs = request.body().path("top_logprobs").asInt(0);
    }

    @Override
    void start() {
        lease = hold(backend.lease());
        ChatTemplate template = backend.template(lease.model());
        JsonArray tools = GgufChatPrompt.tools(request);
        String rendered;
        try {
            rendered = template.render(GgufChatPrompt.messages(request, modelId), tools, true);
        } catch (ChatTemplate.TemplateException e) {
            throw InferenceFailure.invalid("messages",
                    "The model's chat template refused the messages: " + e.getMessage());
        }
        prompt = GgufBackend.promptTokens(lease.model(), rendered);
        limit = backend.limit(request.maxTokens(), prompt.length, "messages");
        grammar = GgufChatPrompt.grammar(request, modelId);
        JsonNode choiceParam = request.body().get("tool_choice");
        toolCall = tools != null && choiceParam != null
                && (choiceParam.isObject() || "required".equals(choiceParam.asText()));
        // tool_choice auto (said or implied by tools) on a free answer: the calls are read out of the text at the
        // end, so a stream gets the answer then; on a Hermes-style template a lazy grammar holds the calls to the
        // tools' schemas from the first <tool_call> on
        boolean auto = tools != null && grammar == null
                && (choiceParam == null || choiceParam.isNull() || "auto".equals(choiceParam.asText()));
        autoTools = auto ? tools : null;
        JsonArray hermes = auto ? GgufBackend.hermesTools(lease.model().chatTemplate(), tools) : null;
        if (hermes != null) {
            grammar = GgufChatPrompt.autoGrammar(hermes);
            triggers = grammar == null ? List.of() : List.of(GgufChatPrompt.TOOL_CALL_START);
        }
        if (request.stream()) {
            context().runOnContext(v -> exchange.startStream());
        }
    }

    @Override
    void generate(int index) {
        if (request.stream()) {
            emit(chunk(index, new JsonObject().put("role", "assistant").put("content", toolCall ? null : ""), null,
                    null));
        }
        GgufLogprobs recorded = logprobs ? new GgufLogprobs(lease.model()) : null;
        Answer answer = answer(index, recorded);
        completionTokens += answer.completionTokens();
        if (request.stream()) {
            if (autoTools != null && answer.text() != null && !answer.text().isEmpty()) {
                emit(chunk(index, new JsonObject().put("content", answer.text()), takeLogprobs(recorded), null));
            }
            if (answer.toolCalls() != null) {
                JsonArray deltas = new JsonArray();
                for (int i = 0; i < answer.toolCalls().size(); i++) {
                    deltas.add(answer.toolCalls().getJsonObject(i).copy().put("index", i));
                }
                emit(chunk(index, new JsonObject().put("tool_calls", deltas), takeLogprobs(recorded), null));
            }
            emit(chunk(index, new JsonObject(), takeLogprobs(recorded), answer.finishReason()));
        } else {
            JsonObject message = new JsonObject().put("role", "assistant").put("content", answer.text());
            if (answer.toolCalls() != null) {
                message.put("tool_calls", answer.toolCalls());
            }
            choices.add(new JsonObject().put("index", index).put("message", message)
                    .put("logprobs", recorded == null ? null : recorded.chat())
                    .put("finish_reason", answer.finishReason()));
        }
    }

    /** The log probabilities not yet sent (empty content when there are none), or null when not asked. */
    private static JsonObject takeLogprobs(GgufLogprobs recorded) {
        return recorded == null ? null : recorded.takeChat();
    }

    /**
     * Generates one choice; streamed text goes out as it comes (a tool call's JSON is sent whole at the end, and so is
     * an answer that may hold calls, {@code autoTools} not null).
     */
    private Answer answer(int choice, GgufLogprobs recorded) {
        Sampling sampling = GgufBackend.sampling(request.temperature(), request.topP(), request.seed(), choice,
                request.body(), lease.model().vocabSize());
        if (grammar != null) {
            sampling = sampling.withGrammar(grammar, triggers);
        }
        boolean streamPieces = request.stream() && !toolCall && autoTools == null;
        GgufGeneration.Result generated = GgufGeneration.run(lease, backend.loraPath, backend.shape, prompt, sampling,
                limit, request.stop(), recorded, topLogprobs, exchange, modelId,
                streamPieces
                        ? piece -> emit(
                                chunk(choice, new JsonObject().put("content", piece), takeLogprobs(recorded), null))
                        : null);
        String text = generated.text();
        if (toolCall) {
            JsonObject call;
            try {
                call = new JsonObject(text);
            } catch (DecodeException e) {
                return new Answer(text, null, generated.finishReason(), generated.completionTokens());
            }
            JsonObject arguments = call.getJsonObject("arguments", new JsonObject());
            JsonArray calls = new JsonArray().add(GgufToolCalls.toolCall(call.getString("name"), arguments));
            return new Answer(null, calls, "tool_calls", generated.completionTokens());
        }
        if (autoTools != null && "stop".equals(generated.finishReason())) {
            Answer calls = GgufToolCalls.toolCalls(text, autoTools, generated.completionTokens());
            if (calls != null) {
                return calls;
            }
        }
        return new Answer(text, null, generated.finishReason(), generated.completionTokens());
    }

    private String chunk(int index, JsonObject delta, JsonObject logprobs, String finishReason) {
        JsonObject choice = new JsonObject().put("index", index).put("delta", delta).put("logprobs", logprobs)
                .put("finish_reason", finishReason);
        return new JsonObject().put("id", completionId).put("object", "chat.completion.chunk").put("created", created)
                .put("model", modelId).put("choices", new JsonArray().add(choice)).encode();
    }

    @Override
    void end() {
        exchange.endGenerated(context(), completionId, created, choices, prompt.length, completionTokens);
    }

    @Override
    InferenceFailure failed(Throwable e) {
        return GgufBackend.failed(modelId, e);
    }
}

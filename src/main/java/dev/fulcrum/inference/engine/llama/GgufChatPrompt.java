package dev.fulcrum.inference.engine.llama;

import java.util.List;
import java.util.function.Consumer;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.LocalChatCompletion;
import dev.fulcrum.inference.engine.LocalChatModel;
import dev.fulcrum.inference.engine.LocalLogprobs;

/**
 * One chat request's prompt on a GGUF model: the model held loaded, the messages and tools rendered with the file's
 * chat template and tokenized once (as llama-server does), the grammar of the answer, and the room the prompt leaves in
 * a sequence's context. Each choice samples with seed {@code seed + choice}, the request's penalties and logit biases.
 */
final class GgufChatPrompt implements LocalChatModel.Prompt {

    private final GgufBackend backend;
    private final ChatRequest request;
    private final String modelId;
    private final LlamaEngine.Lease lease;
    private final int[] tokens;
    /** The tokens a choice may generate: the request's limit, at most what the prompt leaves of the context. */
    private final int limit;
    private final String grammar;
    private final List<String> triggers;

    GgufChatPrompt(GgufBackend backend, ChatRequest request, ChatPrompt prompt, String modelId) {
        this.backend = backend;
        this.request = request;
        this.modelId = modelId;
        LlamaEngine.Lease held = backend.lease();
        try {
            ChatTemplate template = backend.template(held.model());
            String rendered;
            try {
                // the tools reach the model through the template even with tool_choice none, as OpenAI's do
                rendered = template.render(prompt.messages(), prompt.tools(), true);
            } catch (ChatTemplate.TemplateException e) {
                throw InferenceFailure.invalid("messages",
                        "The model's chat template refused the messages: " + e.getMessage());
            }
            this.tokens = GgufBackend.promptTokens(held.model(), rendered);
            this.limit = backend.limit(request.maxTokens(), tokens.length, "messages");
            this.grammar = GgufGrammars.of(request, prompt, held.model().chatTemplate());
            // a lazy grammar (tool_choice auto) starts at the template's call marker
            this.triggers = grammar != null && prompt.answerSchema() == null ? List.of(GgufGrammars.TOOL_CALL_START)
                    : List.of();
        } catch (RuntimeException | Error e) {
            held.close();
            throw e;
        }
        this.lease = held;
    }

    @Override
    public int tokens() {
        return tokens.length;
    }

    @Override
    public LocalChatModel.Generated generate(int choice, LocalLogprobs logprobs, Consumer<String> onPiece,
            Exchange exchange) {
        Sampling sampling = GgufBackend.sampling(request.temperature(), request.topP(), request.seed(), choice,
                request.body(), lease.model().vocabSize());
        if (grammar != null) {
            sampling = sampling.withGrammar(grammar, triggers);
        }
        Generation generation = new Generation(tokens, sampling, limit,
                logprobs == null ? -1 : LocalChatCompletion.topLogprobs(request));
        GgufGeneration.Result generated = GgufGeneration.run(lease, backend.loraPath, backend.shape, generation,
                request.stop(), logprobs, exchange, modelId, null, onPiece);
        return new LocalChatModel.Generated(generated.text(), generated.finishReason(), generated.completionTokens());
    }

    @Override
    public void close() {
        lease.close();
    }
}

package dev.fulcrum.inference.engine.llama;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.LocalChatCompletion;
import dev.fulcrum.inference.engine.LocalChatModel;
import dev.fulcrum.inference.engine.LocalLogprobs;
import dev.fulcrum.inference.engine.format.AnswerReader;
import dev.fulcrum.inference.engine.format.ChatFormat;
import dev.fulcrum.inference.engine.template.ChatTemplate;

/**
 * One chat request's prompt on a GGUF model: the model held loaded, the messages and tools rendered with the file's
 * chat template in its chat format and tokenized once (as llama-server does), the grammar of the answer and how it
 * reads, and the room the prompt leaves in a sequence's context. Each choice samples with seed {@code seed + choice},
 * the request's penalties and logit biases.
 */
final class GgufChatPrompt implements LocalChatModel.Prompt {

    private final GgufBackend backend;
    private final ChatRequest request;
    private final String modelId;
    private final LlamaEngine.Lease lease;
    private final int[] tokens;
    /** The tokens a choice may generate: the request's limit, at most what the prompt leaves of the context. */
    private final int limit;
    private final ChatFormat.Constraint constraint;
    private final AnswerReader reader;
    /** The format's markers the vocabulary holds as special tokens, printed all the same. */
    private final Set<Integer> printed = new HashSet<>();

    GgufChatPrompt(GgufBackend backend, ChatRequest request, ChatPrompt prompt, String modelId) {
        this.backend = backend;
        this.request = request;
        this.modelId = modelId;
        LlamaEngine.Lease held = backend.lease();
        try {
            ChatTemplate template = backend.template(held.model());
            ChatFormat format = backend.format(held.model());
            ChatFormat.Rendering rendering = format.render(prompt);
            String rendered;
            try {
                // the tools reach the model through the template even with tool_choice none, as OpenAI's do
                rendered = template.render(rendering.messages(), rendering.tools(), true, rendering.variables());
            } catch (ChatTemplate.TemplateException e) {
                throw InferenceFailure.invalid("messages",
                        "The model's chat template refused the messages: " + e.getMessage());
            }
            this.tokens = GgufBackend.promptTokens(held.model(), rendered);
            this.limit = backend.limit(request.maxTokens(), tokens.length, "messages");
            this.constraint = GgufGrammars.of(request, prompt, format);
            // a response_format schema holds the answer to itself: no calls are read from it
            boolean calls = prompt.tools() != null && prompt.toolMode() != ChatPrompt.ToolMode.NONE
                    && !(prompt.toolMode() == ChatPrompt.ToolMode.AUTO && prompt.answerSchema() != null);
            boolean thinking = format.think() != null && rendered.stripTrailing().endsWith(format.think().open());
            this.reader = new AnswerReader(format,
                    new ChatFormat.Reading(calls, backend.reasoning(request), thinking, false), constraint != null);
            for (String word : format.printed()) {
                int[] ids = held.model().tokenize(word, false, true);
                if (ids.length == 1) {
                    printed.add(ids[0]);
                }
            }
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
        if (constraint != null) {
            sampling = sampling.withGrammar(constraint.grammar(), constraint.triggers());
        }
        Generation generation = new Generation(tokens, sampling, limit,
                logprobs == null ? -1 : LocalChatCompletion.topLogprobs(request)).printing(printed);
        GgufGeneration.Result generated = GgufGeneration.run(lease, backend.loraPath, backend.shape, generation,
                request.stop(), logprobs, exchange, modelId, null, onPiece);
        return new LocalChatModel.Generated(generated.text(), generated.finishReason(), generated.completionTokens());
    }

    @Override
    public AnswerReader reader() {
        return reader;
    }

    @Override
    public void close() {
        lease.close();
    }
}

package dev.fulcrum.inference.engine;

import java.util.function.Consumer;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.format.AnswerReader;

/**
 * What a local engine gives the shared chat completion ({@link LocalChatCompletion}): the fields it honours, its own
 * checks, and per request a prompt it renders with its chat template, tokenizes and generates choices from. Everything
 * OpenAI's shapes ask for (choices, chunks, tool calls, log probabilities, usage) is the completion's.
 */
public interface LocalChatModel extends Backend {

    /** The fields this engine honours; the others are refused by name. */
    ChatFields fields();

    /** The threads that generate, shared fairly between projects: a completion takes one choice per turn. */
    FairExecutor workers();

    /** The largest {@code max_tokens} a request may ask for; more is 400 naming the field. */
    int maxTokens();

    @Override
    default String type() {
        return "llm";
    }

    @Override
    default void check(ChatRequest request, String modelId) {
        LocalChatCompletion.check(this, request, modelId);
    }

    @Override
    default void complete(ChatExchange exchange) {
        new LocalChatCompletion(this, exchange).queueOn(workers());
    }

    /**
     * Refuses what only the engine knows to refuse (its limits of all choices together, a schema its grammars cannot
     * take) with a 400 naming the field. Runs on the event loop, after the request's shape was checked.
     */
    void check(ChatRequest request, ChatPrompt prompt, String modelId);

    /**
     * In a completion's first turn, on a generation thread: the model held loaded, the prompt rendered with the chat
     * template and tokenized. The completion closes it when it is over.
     */
    Prompt open(ChatRequest request, ChatPrompt prompt, String modelId);

    /** The error answered when the engine failed inside with {@code e} (logged by the engine). */
    InferenceFailure failed(String modelId, Throwable e);

    /** One request's rendered prompt, from which its choices are generated one after the other. */
    interface Prompt extends AutoCloseable {

        /** The prompt's tokens, as the engine counts them. */
        int tokens();

        /**
         * Generates choice {@code choice} (sampled with seed {@code seed + choice}): each piece of text goes to
         * {@code onPiece} as soon as no stop string can take it back, each token to {@code logprobs} (when not null)
         * before its piece; stops before its next token when {@code exchange} is cancelled.
         */
        Generated generate(int choice, LocalLogprobs logprobs, Consumer<String> onPiece, Exchange exchange);

        /** How the answers read (the model's chat format): all content unless the engine knows better. */
        default AnswerReader reader() {
            return AnswerReader.PLAIN;
        }

        @Override
        void close();
    }

    /** What one choice gave: its text, why it ended ({@code stop} or {@code length}) and its tokens. */
    record Generated(String text, String finishReason, int completionTokens) {
    }
}

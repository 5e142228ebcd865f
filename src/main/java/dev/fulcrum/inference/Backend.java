package dev.fulcrum.inference;

/** Answers chat completions of one model: an OpenAI-compatible upstream, or the built-in model. */
public interface Backend {

    /**
     * Refuses a request this backend cannot honour with a 400 naming the field ({@link InferenceFailure#unsupported}).
     * Runs on the event loop.
     */
    void check(ChatRequest request, String modelId);

    /**
     * Answers the exchange, plain or streamed, and calls {@link ChatExchange#finish} once at the end. Runs on the event
     * loop and must not block it.
     */
    void complete(ChatExchange exchange);

    /**
     * What {@code GET /v1/models} says the model answers: {@code llm} (chat and text completions), {@code embeddings}
     * (only embeddings), or null when unknown (an upstream server's model).
     */
    default String type() {
        return null;
    }

    /** Releases connections or threads; called when the model leaves the catalog. */
    default void close() {
    }
}

package dev.fulcrum.inference;

/**
 * A {@link Backend} that also answers embeddings ({@code POST /v1/embeddings}). A backend without it is refused on that
 * endpoint with 400 {@code model_not_supported}. A local engine need not implement this itself: it gives a
 * {@code TextEmbedder} to a {@code LocalEmbeddingBackend} (package {@code engine.embedding}), which does the rest.
 */
public interface EmbeddingBackend {

    /** Refuses what this backend cannot honour with a 400 naming the field. Runs on the event loop. */
    void check(EmbeddingRequest request, String modelId);

    /**
     * Answers the embeddings list ({@link Exchange#json}) and calls {@link Exchange#finish} once. Runs on the event
     * loop and must not block it.
     */
    void embed(EmbeddingExchange exchange);
}

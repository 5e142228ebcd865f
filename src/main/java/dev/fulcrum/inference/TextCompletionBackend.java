package dev.fulcrum.inference;

/**
 * A {@link Backend} that also answers text completions ({@code POST /v1/completions}). A backend without it is refused
 * on that endpoint with 400 {@code model_not_supported}.
 */
public interface TextCompletionBackend {

    /** Refuses what this backend cannot honour with a 400 naming the field. Runs on the event loop. */
    void check(TextCompletionRequest request, String modelId);

    /**
     * Answers, plain ({@link Exchange#json}) or streamed ({@link Exchange#startStream}, {@link Exchange#event} per
     * chunk, {@link Exchange#done}), with the objects of {@link TextCompletionExchange#completion}; calls
     * {@link Exchange#finish} once. Runs on the event loop and must not block it.
     */
    void complete(TextCompletionExchange exchange);
}

package dev.fulcrum.inference;

/**
 * A {@link Backend} whose server may answer OpenAI's Responses API itself ({@code POST /v1/responses}): the request is
 * passed to it as it is. Every other backend gets it bridged to a chat completion ({@link ResponsesExchange}).
 */
public interface ResponsesBackend {

    /** Whether {@code /v1/responses} should be tried on the server first (not known to lack it). */
    boolean mayHaveResponsesApi();

    /**
     * Passes a Responses API request to the server. {@code orElse} runs instead when the server has no such path.
     */
    void respond(ResponsesExchange exchange, Runnable orElse);
}

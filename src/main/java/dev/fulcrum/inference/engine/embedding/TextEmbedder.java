package dev.fulcrum.inference.engine.embedding;

import java.util.List;

/**
 * A local model that turns texts into vectors: what a local engine implements to serve {@code /v1/embeddings} through a
 * {@link LocalEmbeddingBackend} (which runs it on worker threads shared fairly between projects, and writes the OpenAI
 * answer, floats or base64). {@link #embed} may block and is never called on the event loop.
 */
public interface TextEmbedder {

    /** The length of every vector. */
    int dimensions();

    /** One vector per text, in order, and the input tokens they took. */
    Embedded embed(List<String> texts);

    /** The vectors of {@link #embed} and the input tokens counted for usage. */
    record Embedded(List<float[]> vectors, int tokens) {
    }
}

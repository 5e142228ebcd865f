package dev.fulcrum.inference.engine.embedding;

import java.util.ArrayList;
import java.util.List;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.model.output.Response;

/**
 * sentence-transformers' all-MiniLM-L6-v2 (384 dimensions, mean pooling, normalised vectors) on ONNX Runtime, as
 * langchain4j's embeddings artifact carries it: the ONNX file and the tokenizer are inside the jar, so nothing is
 * downloaded. Loaded on first use (about 2 s, about 90 MB of weights plus ONNX Runtime's own memory). Texts longer than
 * its 256 word pieces are split and the parts' vectors averaged (langchain4j's way). Runs on the calling thread.
 */
final class MiniLmEmbedder implements TextEmbedder {

    static final int DIMENSIONS = 384;

    private volatile AllMiniLmL6V2EmbeddingModel model;

    private AllMiniLmL6V2EmbeddingModel model() {
        AllMiniLmL6V2EmbeddingModel loaded = model;
        if (loaded == null) {
            synchronized (this) {
                loaded = model;
                if (loaded == null) {
                    // a direct executor: the work stays on the worker thread that the fair executor gave this request
                    loaded = new AllMiniLmL6V2EmbeddingModel(Runnable::run);
                    model = loaded;
                }
            }
        }
        return loaded;
    }

    @Override
    public int dimensions() {
        return DIMENSIONS;
    }

    @Override
    public Embedded embed(List<String> texts) {
        List<TextSegment> segments = new ArrayList<>(texts.size());
        for (String text : texts) {
            segments.add(TextSegment.from(text));
        }
        Response<List<Embedding>> response = model().embedAll(segments);
        List<float[]> vectors = new ArrayList<>(texts.size());
        for (Embedding embedding : response.content()) {
            vectors.add(embedding.vector());
        }
        Integer tokens = response.tokenUsage() == null ? null : response.tokenUsage().inputTokenCount();
        return new Embedded(vectors, tokens == null ? 0 : tokens);
    }
}

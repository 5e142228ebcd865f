package dev.fulcrum.inference.engine.embedding;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

import org.jboss.logging.Logger;

import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.EmbeddingBackend;
import dev.fulcrum.inference.EmbeddingExchange;
import dev.fulcrum.inference.EmbeddingRequest;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.JsonString;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * A local embedding model as a backend: the {@link TextEmbedder} runs on worker threads shared fairly between projects
 * ({@link FairExecutor}; 429 {@code model_at_capacity} beyond a project's queue), never on the event loop, and the
 * OpenAI embeddings list is written there too (floats, or little-endian float32 in base64). It answers nothing but
 * embeddings: chat and text completions are refused with 400 {@code model_not_supported}. Inputs must be text (token
 * ids of other tokenizers mean nothing to it) and {@code dimensions}, when given, its own dimension.
 */
public final class LocalEmbeddingBackend implements Backend, EmbeddingBackend {

    private static final Logger LOG = Logger.getLogger(LocalEmbeddingBackend.class);

    private final TextEmbedder embedder;
    private final FairExecutor workers;

    public LocalEmbeddingBackend(TextEmbedder embedder, FairExecutor workers) {
        this.embedder = embedder;
        this.workers = workers;
    }

    @Override
    public String type() {
        return "embeddings";
    }

    @Override
    public void check(ChatRequest request, String modelId) {
        throw InferenceFailure.endpointNotSupported(modelId, "/v1/chat/completions");
    }

    @Override
    public void complete(ChatExchange exchange) {
        throw new IllegalStateException("refused by check");
    }

    @Override
    public void check(EmbeddingRequest request, String modelId) {
        if (request.texts() == null) {
            throw InferenceFailure.invalid("input", "The model '" + modelId
                    + "' takes text input only: token arrays of other tokenizers mean nothing to it");
        }
        if (request.dimensions() != null && request.dimensions() != embedder.dimensions()) {
            throw InferenceFailure.invalid("dimensions", "This model does not support specifying dimensions.");
        }
    }

    @Override
    public void embed(EmbeddingExchange exchange) {
        exchange.runOn(workers, context -> run(exchange, context));
    }

    private void run(EmbeddingExchange exchange, Context context) {
        if (exchange.cancelled()) {
            return;
        }
        EmbeddingRequest request = exchange.request();
        Buffer answer;
        int tokens;
        try {
            TextEmbedder.Embedded embedded = embedder.embed(request.texts());
            tokens = embedded.tokens();
            answer = list(embedded.vectors(), request.base64(), exchange.model().id(), tokens);
        } catch (RuntimeException e) {
            LOG.error("The embedding model " + exchange.model().id() + " failed", e);
            InferenceFailure failure = new InferenceFailure(Kind.FAILED, "The embedding model failed", null, null,
                    null);
            exchange.failOn(context, failure);
            return;
        }
        int counted = tokens;
        context.runOnContext(v -> {
            exchange.json(200, answer);
            exchange.finish(new Outcome(200, counted, 0));
        });
    }

    /** The OpenAI embeddings list, written directly (a request may carry thousands of vectors). */
    public static Buffer list(List<float[]> vectors, boolean base64, String model, int tokens) {
        int dimensions = vectors.isEmpty() ? 0 : vectors.get(0).length;
        StringBuilder json = new StringBuilder(vectors.size() * (base64 ? dimensions * 6 : dimensions * 12) + 200);
        json.append("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < vectors.size(); i++) {
            if (i > 0) {
                json.append(',');
            }
            json.append("{\"object\":\"embedding\",\"index\":").append(i).append(",\"embedding\":");
            float[] vector = vectors.get(i);
            if (base64) {
                ByteBuffer bytes = ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
                bytes.asFloatBuffer().put(vector);
                json.append('"').append(Base64.getEncoder().encodeToString(bytes.array())).append('"');
            } else {
                json.append('[');
                for (int k = 0; k < vector.length; k++) {
                    if (k > 0) {
                        json.append(',');
                    }
                    json.append(vector[k]);
                }
                json.append(']');
            }
            json.append('}');
        }
        json.append("],\"model\":").append(JsonString.quote(model)).append(",\"usage\":{\"prompt_tokens\":")
                .append(tokens).append(",\"total_tokens\":").append(tokens).append("}}");
        return Buffer.buffer(json.toString());
    }
}

package dev.fulcrum.inference.engine.llama;

import java.util.Arrays;

import com.sun.jna.Pointer;

/**
 * A context of a {@link LlamaModel} that computes embeddings (llama.cpp computes either embeddings or next-token logits
 * with one context): one input at a time, the whole input in one batch, pooled as the file declares
 * ({@code <arch>.pooling_type} of the encoder architectures), else by the last token, whose state has seen the whole
 * input (mean pooling of a causal model trips an assertion of this llama.cpp), then scaled to length 1. The weights are
 * the model's, shared with its generation contexts.
 */
final class LlamaEmbedder {

    private static final int POOLING_LAST = 3;

    private final LlamaModel model;
    private final int slot;
    private Pointer context;
    private final LlamaApi.BatchStruct batch;
    private final Pointer[] seqIds;
    private volatile long lastUsed = System.nanoTime();

    LlamaEmbedder(LlamaModel model, int threads, int slot) {
        this.model = model;
        this.slot = slot;
        String architecture = model.meta("general.architecture");
        boolean pooled = architecture != null && model.meta(architecture + ".pooling_type") != null;
        LlamaApi.ContextParams params = LlamaApi.llama_context_default_params();
        params.n_ctx = slot;
        params.n_batch = slot;
        params.n_ubatch = slot;
        params.n_seq_max = 1;
        params.n_threads = threads;
        params.n_threads_batch = threads;
        params.embeddings = 1;
        params.no_perf = 1;
        if (!pooled) {
            params.pooling_type = POOLING_LAST;
        }
        this.context = LlamaApi.llama_init_from_model(model.pointer(), params);
        if (context == null) {
            throw new IllegalStateException("llama.cpp could not make an embedding context of " + slot + " tokens");
        }
        this.batch = LlamaApi.llama_batch_init(slot, 0, 1);
        this.seqIds = batch.seq_id.getPointerArray(0, slot);
    }

    /** The most tokens one input may have. */
    int slot() {
        return slot;
    }

    /** The unit vector of {@code tokens} (at most {@link #slot()} of them). */
    synchronized float[] embed(int[] tokens) {
        if (context == null) {
            throw new IllegalStateException("The model was unloaded");
        }
        lastUsed = System.nanoTime();
        LlamaApi.llama_kv_self_clear(context);
        int n = tokens.length;
        int[] positions = new int[n];
        int[] ones = new int[n];
        byte[] outputs = new byte[n];
        for (int i = 0; i < n; i++) {
            positions[i] = i;
            ones[i] = 1;
            outputs[i] = 1;
            seqIds[i].setInt(0, 0);
        }
        batch.n_tokens = n;
        batch.token.write(0, tokens, 0, n);
        batch.pos.write(0, positions, 0, n);
        batch.n_seq_id.write(0, ones, 0, n);
        batch.logits.write(0, outputs, 0, n);
        int status = LlamaApi.llama_decode(context, batch);
        if (status != 0) {
            throw new IllegalStateException("llama_decode answered " + status + " for an embedding");
        }
        Pointer pooled = LlamaApi.llama_get_embeddings_seq(context, 0);
        if (pooled == null) {
            throw new IllegalStateException("llama.cpp gave no pooled embedding");
        }
        float[] vector = pooled.getFloatArray(0, model.embeddingLength());
        double norm = 0;
        for (float v : vector) {
            norm += (double) v * v;
        }
        norm = Math.sqrt(norm);
        if (norm > 0) {
            for (int i = 0; i < vector.length; i++) {
                vector[i] = (float) (vector[i] / norm);
            }
        }
        lastUsed = System.nanoTime();
        return Arrays.copyOf(vector, vector.length);
    }

    long lastUsed() {
        return lastUsed;
    }

    synchronized void close() {
        if (context != null) {
            LlamaApi.llama_batch_free(batch);
            LlamaApi.llama_free(context);
            context = null;
        }
    }
}

package dev.fulcrum.inference.engine.llama;

import java.util.Arrays;

import com.sun.jna.Pointer;

/**
 * A {@code llama_batch} of at most {@code capacity} tokens, each in one sequence, allocated once by llama.cpp and
 * written in place for every decode.
 */
final class LlamaBatch {

    private final LlamaApi.BatchStruct batch;
    private final Pointer[] seqIds;
    private final int[] ones;

    LlamaBatch(int capacity) {
        this.batch = LlamaApi.llama_batch_init(capacity, 0, 1);
        this.seqIds = batch.seq_id.getPointerArray(0, capacity);
        this.ones = new int[capacity];
        Arrays.fill(ones, 1);
    }

    /**
     * Decodes the first {@code n} entries: token, position, sequence id, and whether its logits (or embedding) are
     * wanted. Answers {@code llama_decode}'s status (0 done, 1 no room in the KV cache, below 0 an error).
     */
    int decode(Pointer context, int n, int[] tokens, int[] positions, int[] sequences, byte[] outputs) {
        for (int i = 0; i < n; i++) {
            seqIds[i].setInt(0, sequences[i]);
        }
        batch.n_tokens = n;
        batch.token.write(0, tokens, 0, n);
        batch.pos.write(0, positions, 0, n);
        batch.n_seq_id.write(0, ones, 0, n);
        batch.logits.write(0, outputs, 0, n);
        return LlamaApi.llama_decode(context, batch);
    }

    void free() {
        LlamaApi.llama_batch_free(batch);
    }
}

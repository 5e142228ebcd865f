package dev.fulcrum.inference.engine.llama;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import com.sun.jna.Pointer;

/**
 * A context of a {@link LlamaModel} that computes embeddings (llama.cpp computes either embeddings or next-token logits
 * with one context): one input at a time, the whole input in one batch, pooled as the file declares
 * ({@code <arch>.pooling_type} of the encoder architectures), else by the last token, whose state has seen the whole
 * input (mean pooling of a causal model trips an assertion of this llama.cpp), then scaled to length 1. The weights are
 * the model's, shared with its generation contexts.
 * <p>
 * Inputs are computed on one thread of the embedder's, which ends after {@code threadIdle} without work: each thread
 * that calls {@code llama_decode} keeps a team of libgomp threads until it ends, and the request threads that ask for
 * embeddings are many and long-lived, so computing on them would leave a team per request thread, which slows every
 * context's barriers once they outnumber the CPUs (see {@link LlamaContext}).
 */
final class LlamaEmbedder {

    private static final int POOLING_LAST = 3;

    private final LlamaModel model;
    private final int slot;
    private Pointer context;
    private final LlamaBatch batch;
    private volatile long lastUsed = System.nanoTime();
    private final ThreadPoolExecutor thread;

    LlamaEmbedder(LlamaModel model, int threads, int slot, Duration threadIdle) {
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
        this.batch = new LlamaBatch(slot);
        String name = "llama-embed-" + Thread.currentThread().getId();
        this.thread = new ThreadPoolExecutor(1, 1, Math.max(1, threadIdle.toNanos()), TimeUnit.NANOSECONDS,
                new LinkedBlockingQueue<>(), task -> {
                    Thread t = new Thread(task, name);
                    t.setDaemon(true);
                    return t;
                });
        thread.allowCoreThreadTimeOut(true);
    }

    /** The most tokens one input may have. */
    int slot() {
        return slot;
    }

    /** The unit vector of {@code tokens} (at most {@link #slot()} of them), computed on the embedder's thread. */
    float[] embed(int[] tokens) {
        lastUsed = System.nanoTime();
        Future<float[]> vector;
        try {
            vector = thread.submit(() -> compute(tokens));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("The model was unloaded");
        }
        try {
            return vector.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new IllegalStateException("llama.cpp failed to compute an embedding", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while computing an embedding", e);
        }
    }

    private float[] compute(int[] tokens) {
        if (context == null) {
            throw new IllegalStateException("The model was unloaded");
        }
        LlamaApi.llama_kv_self_clear(context);
        int n = tokens.length;
        int[] positions = new int[n];
        byte[] outputs = new byte[n];
        for (int i = 0; i < n; i++) {
            positions[i] = i;
            outputs[i] = 1;
        }
        int status = batch.decode(context, n, tokens, positions, new int[n], outputs);
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

    /** Frees the context once the inputs already given are computed; later ones are refused. */
    synchronized void close() {
        thread.shutdown();
        boolean interrupted = false;
        while (!thread.isTerminated()) {
            try {
                thread.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (context != null) {
            batch.free();
            LlamaApi.llama_free(context);
            context = null;
        }
    }
}

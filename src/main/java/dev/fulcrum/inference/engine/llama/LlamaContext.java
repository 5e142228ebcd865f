package dev.fulcrum.inference.engine.llama;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jboss.logging.Logger;

import com.sun.jna.Pointer;

/**
 * A llama.cpp context on a {@link LlamaModel}, with at most one LoRA adapter applied (llama.cpp sets adapters on a
 * context, not on a sequence), and the loop that generates its sequences: llama-server's slot loop. Up to
 * {@code parallel} sequences run at once, each in a sequence id of the one KV cache of {@code parallel x slot} cells;
 * every step decodes one batch holding each running sequence's next token (or the next part of its prompt), then
 * samples each sequence from its own row of logits with its own sampler chain. A sequence that ends frees its id at
 * once, and a waiting one takes it at the next step (continuous batching).
 * <p>
 * A finished sequence's tokens stay in its cache: a new prompt takes the free id whose cached tokens share the longest
 * prefix with it and evaluates only the rest (llama-server's {@code cache_prompt}), unless it asks for a reproducible
 * answer: its last prompt token would be evaluated in a batch of another size, whose logits differ in the last bits,
 * which can turn a near tie. A scored prompt ({@link Generation#scored}) is evaluated whole too, with the logits of
 * every position it scores ({@link PromptScores}) read as they are decoded: position {@code p}'s give token
 * {@code p + 1}'s log probability.
 * <p>
 * The loop runs on a thread of its own only while there is work, and for {@code threadIdle} after it: llama.cpp
 * computes in OpenMP parallel regions, and libgomp keeps a team of threads for each thread that calls
 * {@code llama_decode} until that thread ends. Its spin-wait at a barrier drops from about 300,000 spins to 100 once
 * the threads of all teams outnumber the CPUs, so an idle context keeping its team made every other context's barriers
 * fall back to sleeping and waking (a second model used once slowed the first by a third on 2 cores). The thread ends
 * when idle, taking its team with it, and the next submission starts another.
 */
final class LlamaContext {

    private static final Logger LOG = Logger.getLogger(LlamaContext.class);
    /** The most prompt tokens decoded in one step (llama.cpp's default batch). */
    static final int BATCH = 512;

    private final LlamaModel model;
    private final LlamaAdapter adapter;
    private final int parallel;
    private final int slot;
    private Pointer context;
    private final LlamaBatch batch;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Deque<Generation> waiting = new ArrayDeque<>();
    private final Generation[] running;
    /** The tokens each sequence id holds in the cache. */
    private final int[][] cached;
    private final int[] cachedLength;
    private final long threadIdle;
    private final String threadName;
    /** The thread running the loop, null while idle (guarded by {@code lock}). */
    private Thread loop;
    /** Generations submitted and not ended (guarded by {@code lock}). */
    private int active;
    private volatile boolean closed;
    private volatile long lastUsed = System.nanoTime();
    private final int[] tokens = new int[BATCH];
    private final int[] positions = new int[BATCH];
    private final int[] sequences = new int[BATCH];
    private final byte[] outputs = new byte[BATCH];
    private final List<Generation> scoring = new ArrayList<>();

    LlamaContext(LlamaModel model, LlamaAdapter adapter, int threads, int slot, int parallel, Duration threadIdle) {
        this.model = model;
        this.adapter = adapter;
        this.parallel = parallel;
        this.slot = slot;
        this.threadIdle = threadIdle.toNanos();
        LlamaApi.ContextParams params = LlamaApi.llama_context_default_params();
        params.n_ctx = slot * parallel;
        params.n_batch = BATCH;
        params.n_ubatch = BATCH;
        params.n_seq_max = parallel;
        params.n_threads = threads;
        params.n_threads_batch = threads;
        params.no_perf = 1;
        this.context = LlamaApi.llama_init_from_model(model.pointer(), params);
        if (context == null) {
            throw new IllegalStateException("llama.cpp could not make a context of " + params.n_ctx + " tokens");
        }
        if (adapter != null && LlamaApi.llama_set_adapter_lora(context, adapter.pointer(), 1f) != 0) {
            LlamaApi.llama_free(context);
            throw new IllegalStateException("llama.cpp could not apply the adapter " + adapter.path());
        }
        this.batch = new LlamaBatch(BATCH);
        this.running = new Generation[parallel];
        this.cached = new int[parallel][slot];
        this.cachedLength = new int[parallel];
        this.threadName = "llama-" + Thread.currentThread().getId();
    }

    /** The cells of the cache in use, every sequence's (for tests: read while the context is idle). */
    int usedCells() {
        return LlamaApi.llama_kv_self_used_cells(context);
    }

    LlamaAdapter adapter() {
        return adapter;
    }

    int slot() {
        return slot;
    }

    /**
     * Queues a generation; it starts at the loop's next step once a sequence id is free. False when the context was
     * closed (unloaded): the caller takes a new one.
     */
    boolean submit(Generation generation) {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            waiting.add(generation);
            active++;
            lastUsed = System.nanoTime();
            if (loop == null) {
                loop = new Thread(this::run, threadName);
                loop.setDaemon(true);
                loop.start();
            } else {
                work.signal();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the context if no sequence ran or waited for {@code nanos} (or at all, with 0), in one step with that
     * check, so no generation is taken while it closes. True when it closed.
     */
    boolean closeIfIdle(long nanos) {
        Thread running;
        lock.lock();
        try {
            if (closed || active > 0 || System.nanoTime() - lastUsed < nanos) {
                return closed;
            }
            closed = true;
            running = loop;
            work.signal();
        } finally {
            lock.unlock();
        }
        closed(running);
        return true;
    }

    boolean closed() {
        return closed;
    }

    long lastUsed() {
        return lastUsed;
    }

    private void run() {
        List<Generation> sampling = new ArrayList<>(parallel);
        while (true) {
            lock.lock();
            try {
                long idle = threadIdle;
                while (!closed && waiting.isEmpty() && Arrays.stream(running).allMatch(g -> g == null)) {
                    if (idle <= 0) {
                        loop = null; // the thread ends, and libgomp's team of it with it; submit starts another
                        return;
                    }
                    try {
                        idle = work.awaitNanos(idle);
                    } catch (InterruptedException e) {
                        idle = 0;
                    }
                }
                if (closed) {
                    break;
                }
                admit();
            } finally {
                lock.unlock();
            }
            try {
                step(sampling);
            } catch (RuntimeException | Error e) {
                LOG.errorf(e, "llama.cpp failed to decode");
                endAll("error", "The model failed to decode");
            }
            lastUsed = System.nanoTime();
        }
        free();
    }

    /** Ends what is left and frees the context: on the loop's thread, or on the closing one when no loop runs. */
    private void free() {
        endAll("error", "The model was unloaded");
        batch.free();
        LlamaApi.llama_free(context);
        context = null;
    }

    /** Gives each waiting generation a free sequence id, the one sharing the longest prefix with its prompt. */
    private void admit() {
        while (!waiting.isEmpty()) {
            int free = -1;
            int best = -1;
            Generation next = waiting.peek();
            for (int seq = 0; seq < parallel; seq++) {
                if (running[seq] == null) {
                    int common = next.sampling.reproducible() || next.scored ? 0 : common(seq, next.prompt);
                    if (common > best) {
                        best = common;
                        free = seq;
                    }
                }
            }
            if (free < 0) {
                return;
            }
            waiting.poll();
            if (next.cancelled()) {
                active--;
                next.post(new Generation.End("cancelled", 0, 0, null));
                continue;
            }
            try {
                next.sampler = next.sampling.chain(model);
            } catch (IllegalArgumentException e) {
                active--;
                next.post(new Generation.End("error", 0, 0, e.getMessage()));
                continue;
            }
            // the last prompt token is always evaluated again: its logits give the first token
            int keep = Math.min(best, next.prompt.length - 1);
            LlamaApi.llama_kv_self_seq_rm(context, free, keep, -1);
            cachedLength[free] = keep;
            next.seq = free;
            next.evaluated = keep;
            if (next.scored) {
                next.promptScores = new PromptScores(next, model);
            }
            running[free] = next;
        }
        dropIdleCaches();
    }

    /**
     * Drops the caches of the idle sequence ids while others generate: llama.cpp's one cache is read up to its last
     * used cell at every decoded token, the cells of idle sequences masked but read all the same, so an idle cache
     * slows every token of the others in proportion to its size (on SmolLM2 135M, four finished answers' 680 cells
     * slowed the next answer by a third). An idle context keeps them: the next prompt still takes the id sharing its
     * longest prefix, and a waiting prompt is given its id before the others are dropped.
     */
    private void dropIdleCaches() {
        boolean generating = false;
        for (Generation g : running) {
            generating |= g != null;
        }
        for (int seq = 0; generating && seq < parallel; seq++) {
            if (running[seq] == null && cachedLength[seq] > 0) {
                LlamaApi.llama_kv_self_seq_rm(context, seq, -1, -1);
                cachedLength[seq] = 0;
            }
        }
    }

    private int common(int seq, int[] prompt) {
        int n = Math.min(cachedLength[seq], prompt.length);
        int i = 0;
        while (i < n && cached[seq][i] == prompt[i]) {
            i++;
        }
        return i;
    }

    /** One step: a batch of every running sequence's next tokens, decoded, then each sequence sampled. */
    private void step(List<Generation> sampling) {
        sampling.clear();
        scoring.clear();
        int n = 0;
        Arrays.fill(outputs, (byte) 0);
        for (int seq = 0; seq < parallel && n < BATCH; seq++) {
            Generation g = running[seq];
            if (g == null) {
                continue;
            }
            if (g.cancelled()) {
                finish(g, "cancelled", null);
                continue;
            }
            if (g.evaluated < g.prompt.length) {
                int take = Math.min(g.prompt.length - g.evaluated, BATCH - n);
                g.scoredFrom = n;
                for (int i = 0; i < take; i++) {
                    tokens[n] = g.prompt[g.evaluated + i];
                    positions[n] = g.evaluated + i;
                    sequences[n] = seq;
                    outputs[n] = (byte) (g.scored && g.promptScores.reads(g.evaluated + i) ? 1 : 0);
                    n++;
                }
                g.evaluated += take;
                remember(seq, g.prompt, g.evaluated - take, take);
                if (g.scored) {
                    scoring.add(g);
                }
                if (g.evaluated == g.prompt.length) {
                    outputs[n - 1] = 1;
                    g.outputIndex = n - 1;
                    sampling.add(g);
                }
            } else {
                tokens[n] = g.last;
                positions[n] = g.prompt.length + g.generated - 1;
                sequences[n] = seq;
                outputs[n] = 1;
                g.outputIndex = n;
                remember(seq, new int[] { g.last }, 0, 1);
                n++;
                sampling.add(g);
            }
        }
        if (n == 0) {
            return;
        }
        int status = batch.decode(context, n, tokens, positions, sequences, outputs);
        if (status != 0) {
            LOG.warnf("llama_decode answered %d for a batch of %d tokens", status, n);
            for (Generation g : running) {
                if (g != null) {
                    finish(g, "error", status == 1 ? "The model's context is full" : "The model failed to decode");
                }
            }
            return;
        }
        for (Generation g : scoring) {
            score(g);
        }
        for (Generation g : sampling) {
            if (g.generated >= g.maxTokens) { // max_tokens 0: the prompt alone
                finish(g, "length", null);
            } else {
                sample(g);
            }
        }
    }

    /**
     * Reads the log probabilities of the prompt tokens this step's logits give (each position's logits give the next
     * position's token); once the whole prompt is scored, posts it.
     */
    private void score(Generation g) {
        // the next token to score is read from this step's first position, the one before it
        int first = g.promptScores.next();
        int last = Math.min(g.evaluated, g.prompt.length - 1);
        for (int t = first; t <= last; t++) {
            g.promptScores.add(model, g.promptScores.reads(t - 1) ? logits(g.scoredFrom + t - first) : null);
        }
        if (g.evaluated == g.prompt.length) {
            g.post(g.promptScores.prompt());
            g.promptScores = null;
        }
    }

    private void remember(int seq, int[] tokens, int from, int count) {
        int room = Math.min(count, slot - cachedLength[seq]);
        if (room > 0) {
            System.arraycopy(tokens, from, cached[seq], cachedLength[seq], room);
            cachedLength[seq] += room;
        }
    }

    private void sample(Generation g) {
        int token = LlamaApi.llama_sampler_sample(g.sampler, context, g.outputIndex);
        g.generated++;
        if (model.isEndOfGeneration(token)) {
            Generation.Token end = null;
            if (g.scored) { // a scorer reads the token that ended the continuation as vLLM reports it
                end = TokenLogprobs.of(token, model.specialPiece(token), logits(g.outputIndex), g.topLogprobs);
            }
            finish(g, "stop", null, end);
            return;
        }
        Generation.Token event;
        if (g.topLogprobs >= 0) {
            event = TokenLogprobs.of(token, g.piece(model, token), logits(g.outputIndex), g.topLogprobs);
        } else {
            event = new Generation.Token(token, g.piece(model, token), Float.NaN, null, null);
        }
        g.last = token;
        g.post(event);
        if (g.generated >= g.maxTokens) {
            finish(g, "length", null);
        }
    }

    /** The row of logits the last decode gave batch entry {@code index}. */
    private float[] logits(int index) {
        return LlamaApi.llama_get_logits_ith(context, index).getFloatArray(0, model.vocabSize());
    }

    private void finish(Generation g, String reason, String message) {
        finish(g, reason, message, null);
    }

    private void finish(Generation g, String reason, String message, Generation.Token endToken) {
        running[g.seq] = null;
        if (g.sampler != null) {
            LlamaApi.llama_sampler_free(g.sampler);
            g.sampler = null;
        }
        if (!"stop".equals(reason) && !"length".equals(reason)) {
            // a cancelled or failed sequence's cache is dropped: it may hold tokens never decoded
            LlamaApi.llama_kv_self_seq_rm(context, g.seq, -1, -1);
            cachedLength[g.seq] = 0;
        }
        if (waiting.isEmpty()) { // else the waiting prompt takes its id first (admit)
            // here, not only in admit(): of answers ending in one step, all but the last are dropped while the others
            // still count as generating, which the next admit() would no longer see
            dropIdleCaches();
        }
        ended();
        g.post(new Generation.End(reason, g.prompt.length, g.generated, message, endToken));
    }

    private void ended() {
        lock.lock();
        try {
            active--;
        } finally {
            lock.unlock();
        }
    }

    private void endAll(String reason, String message) {
        lock.lock();
        try {
            for (Generation g : running) {
                if (g != null) {
                    finish(g, reason, message);
                }
            }
            for (Generation g : waiting) {
                active--;
                g.post(new Generation.End(reason, 0, 0, message));
            }
            waiting.clear();
        } finally {
            lock.unlock();
        }
    }

    /** Stops the loop and frees the context once the current step is done (running sequences end in error). */
    void close() {
        Thread running;
        lock.lock();
        try {
            if (closed && loop == null) {
                return; // freed already
            }
            closed = true;
            running = loop;
            work.signal();
        } finally {
            lock.unlock();
        }
        closed(running);
    }

    /** Once closed: waits for the loop that frees the context, or frees it here when no loop runs (none can start). */
    private void closed(Thread running) {
        if (running == null) {
            free();
        } else if (Thread.currentThread() != running) {
            try {
                running.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

package dev.fulcrum.inference.engine.llama;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

/**
 * The GGUF files this process has loaded, shared by every catalog entry and checkpoint that names them: one
 * {@link LlamaModel} per file, one {@link LlamaAdapter} per adapter file on it, and a {@link LlamaContext} per adapter
 * in use (llama.cpp applies adapters per context), at most {@code maxContexts} per model. Whatever goes unused for
 * {@code idleUnload} is freed (contexts, then adapters, then the model), and loading a model that would take the loaded
 * files over {@code memoryBudget} bytes first frees the least recently used models that are not busy. A request for
 * something freed loads it again.
 */
public final class LlamaEngine implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(LlamaEngine.class);

    /** A context's shape: CPU threads, tokens per sequence, sequences at once. */
    public record Shape(int threads, int slot, int parallel) {
    }

    /** The engine could not take more work on a model now (every context busy); try again shortly. */
    public static final class Busy extends RuntimeException {
        Busy(String message) {
            super(message);
        }
    }

    /**
     * How long a context's or embedder's compute thread waits for work before it ends (the configuration's default).
     */
    static final Duration THREAD_IDLE = Duration.ofSeconds(2);

    private final Duration idleUnload;
    private final Duration threadIdle;
    private final long memoryBudget;
    private final int maxContexts;
    private final Map<String, Loaded> models = new HashMap<>();
    private final ScheduledExecutorService sweeper;

    /** A loaded file with its adapters, contexts and embedder (guarded by the engine). */
    private static final class Loaded {
        final LlamaModel model;
        final Map<String, LlamaAdapter> adapters = new HashMap<>();
        final Map<String, Long> adapterUse = new HashMap<>();
        final Map<String, LlamaContext> contexts = new HashMap<>();
        LlamaEmbedder embedder;
        /** Leases not closed: while any is open, nothing of the model is freed. */
        int leases;
        long lastUsed = System.nanoTime();

        Loaded(LlamaModel model) {
            this.model = model;
        }
    }

    /**
     * @param memoryBudget
     *            the most bytes of GGUF files loaded at once (0: no bound); a single file larger than that still loads
     *            when nothing else is loaded
     */
    public LlamaEngine(Duration idleUnload, long memoryBudget, int maxContexts) {
        this(idleUnload, THREAD_IDLE, memoryBudget, maxContexts);
    }

    /**
     * @param threadIdle
     *            how long a context's or embedder's compute thread waits for work before it ends, with the OpenMP
     *            threads llama.cpp keeps for it (see {@link LlamaContext}); the next request starts another
     */
    public LlamaEngine(Duration idleUnload, Duration threadIdle, long memoryBudget, int maxContexts) {
        this.idleUnload = idleUnload;
        this.threadIdle = threadIdle;
        this.memoryBudget = memoryBudget;
        this.maxContexts = maxContexts;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "llama-unload");
            thread.setDaemon(true);
            return thread;
        });
        long period = Math.max(100, Math.min(30_000, idleUnload.toMillis() / 4));
        sweeper.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * The model of {@code path}, loaded when it is not, kept loaded until the lease is closed: tokenizing, rendering
     * and generating all happen under a lease, so nothing is freed under a request.
     */
    public synchronized Lease lease(String path) {
        Loaded loaded = loaded(path);
        loaded.leases++;
        return new Lease(path, loaded);
    }

    /** A model held loaded for one request ({@link #lease}). */
    public final class Lease implements AutoCloseable {

        private final String path;
        private final Loaded loaded;
        private boolean closed;

        private Lease(String path, Loaded loaded) {
            this.path = path;
            this.loaded = loaded;
        }

        public LlamaModel model() {
            return loaded.model;
        }

        /** Starts a generation with {@code adapter} (an adapter file's path, or null for none). */
        public Generation generate(String adapter, Shape shape, Generation generation) {
            while (true) {
                if (context(loaded, path, adapter, shape).submit(generation)) {
                    return generation;
                }
            }
        }

        /**
         * The cells of the cache of the context for {@code adapter} and {@code shape} in use (read when it is idle).
         */
        int cachedTokens(String adapter, Shape shape) {
            return context(loaded, path, adapter, shape).usedCells();
        }

        /** The unit embedding vector of {@code tokens}, computed on the embedder's thread. */
        public float[] embed(Shape shape, int[] tokens) {
            LlamaEmbedder embedder;
            synchronized (LlamaEngine.this) {
                if (loaded.embedder == null) {
                    loaded.embedder = new LlamaEmbedder(loaded.model, shape.threads(), shape.slot(), threadIdle);
                }
                embedder = loaded.embedder;
            }
            return embedder.embed(tokens);
        }

        @Override
        public void close() {
            synchronized (LlamaEngine.this) {
                if (!closed) {
                    closed = true;
                    loaded.leases--;
                    loaded.lastUsed = System.nanoTime();
                }
            }
        }
    }

    private synchronized LlamaContext context(Loaded loaded, String path, String adapter, Shape shape) {
        String key = (adapter == null ? "" : adapter) + "\n" + shape;
        LlamaContext context = loaded.contexts.get(key);
        if (context != null && !context.closed()) {
            return context;
        }
        loaded.contexts.remove(key);
        if (loaded.contexts.size() >= maxContexts) {
            List<Map.Entry<String, LlamaContext>> byUse = new ArrayList<>(loaded.contexts.entrySet());
            byUse.sort(Comparator.comparingLong(e -> e.getValue().lastUsed()));
            for (Map.Entry<String, LlamaContext> entry : byUse) {
                if (entry.getValue().closeIfIdle(0)) {
                    loaded.contexts.remove(entry.getKey());
                    break;
                }
            }
            if (loaded.contexts.size() >= maxContexts) {
                throw new Busy("All " + maxContexts + " contexts of " + path + " are busy with other checkpoints");
            }
        }
        LlamaAdapter lora = null;
        if (adapter != null) {
            lora = loaded.adapters.get(adapter);
            if (lora == null) {
                lora = LlamaAdapter.load(loaded.model, adapter);
                loaded.adapters.put(adapter, lora);
                LOG.infof("Loaded the LoRA adapter %s on %s", adapter, path);
            }
            loaded.adapterUse.put(adapter, System.nanoTime());
        }
        context = new LlamaContext(loaded.model, lora, shape.threads(), shape.slot(), shape.parallel(), threadIdle);
        loaded.contexts.put(key, context);
        return context;
    }

    private Loaded loaded(String path) {
        Loaded loaded = models.get(path);
        if (loaded == null) {
            long size;
            try {
                size = Files.size(Path.of(path));
            } catch (IOException e) {
                throw new IllegalStateException("The model file " + path + " cannot be read", e);
            }
            makeRoom(size);
            long start = System.nanoTime();
            loaded = new Loaded(LlamaModel.load(path, size));
            models.put(path, loaded);
            LOG.infof("Loaded the GGUF model %s (%d MiB) in %d ms", path, size >> 20,
                    (System.nanoTime() - start) / 1_000_000);
        }
        loaded.lastUsed = System.nanoTime();
        return loaded;
    }

    /** Frees least recently used models that are not busy until {@code size} more bytes fit in the budget. */
    private void makeRoom(long size) {
        if (memoryBudget <= 0) {
            return;
        }
        List<Map.Entry<String, Loaded>> byUse = new ArrayList<>(models.entrySet());
        byUse.sort(Comparator.comparingLong(e -> e.getValue().lastUsed));
        for (Map.Entry<String, Loaded> entry : byUse) {
            if (total() + size <= memoryBudget) {
                return;
            }
            if (closeAll(entry.getValue(), 0)) {
                free(entry.getKey(), entry.getValue(), "to make room in the memory budget");
            }
        }
    }

    private long total() {
        return models.values().stream().mapToLong(l -> l.model.fileSize()).sum();
    }

    /** Closes the model's contexts idle for {@code nanos}; true when none is left and no lease is open. */
    private static boolean closeAll(Loaded loaded, long nanos) {
        if (loaded.leases > 0) {
            return false;
        }
        loaded.contexts.values().removeIf(context -> context.closeIfIdle(nanos));
        if (loaded.embedder != null && System.nanoTime() - loaded.embedder.lastUsed() >= nanos) {
            loaded.embedder.close();
            loaded.embedder = null;
        }
        return loaded.contexts.isEmpty() && loaded.embedder == null;
    }

    private void free(String path, Loaded loaded, String why) {
        loaded.adapters.values().forEach(LlamaAdapter::free);
        loaded.adapters.clear();
        loaded.model.free();
        models.remove(path);
        NativeMemory.trim();
        LOG.infof("Unloaded the GGUF model %s %s", path, why);
    }

    /** Frees what went unused for {@code idleUnload}. */
    synchronized void sweep() {
        long idle = idleUnload.toNanos();
        long now = System.nanoTime();
        for (Map.Entry<String, Loaded> entry : new ArrayList<>(models.entrySet())) {
            Loaded loaded = entry.getValue();
            boolean empty = closeAll(loaded, idle);
            // an adapter no context applies any more, unused for the idle time
            List<String> inUse = loaded.contexts.values().stream().filter(c -> c.adapter() != null)
                    .map(c -> c.adapter().path()).toList();
            for (String adapter : new ArrayList<>(loaded.adapters.keySet())) {
                if (!inUse.contains(adapter) && now - loaded.adapterUse.getOrDefault(adapter, 0L) >= idle) {
                    loaded.adapters.remove(adapter).free();
                    loaded.adapterUse.remove(adapter);
                    LOG.infof("Unloaded the LoRA adapter %s, unused for %s", adapter, idleUnload);
                }
            }
            if (empty && now - loaded.lastUsed >= idle) {
                free(entry.getKey(), loaded, "unused for " + idleUnload);
            }
        }
    }

    /** Whether {@code path} is loaded now (tests and the metrics). */
    public synchronized boolean isLoaded(String path) {
        return models.containsKey(path);
    }

    /** Frees everything: running generations end in error. */
    @Override
    public synchronized void close() {
        sweeper.shutdownNow();
        for (Map.Entry<String, Loaded> entry : new ArrayList<>(models.entrySet())) {
            entry.getValue().contexts.values().forEach(LlamaContext::close);
            entry.getValue().contexts.clear();
            if (entry.getValue().embedder != null) {
                entry.getValue().embedder.close();
            }
            free(entry.getKey(), entry.getValue(), "at shutdown");
        }
    }
}

package dev.fulcrum.inference;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The inference gateway: the configured model catalog, limits and the usage writer. */
@ConfigMapping(prefix = "fulcrum.inference")
public interface InferenceConfig {

    /**
     * Models of the catalog from configuration, by model id (quote ids holding {@code /} or {@code .}:
     * {@code fulcrum.inference.models."meta-llama/Llama-3.1-8B-Instruct".base-url=http://vllm:8000/v1}).
     */
    Map<String, ModelSettings> models();

    /** The built-in model. */
    Builtin builtin();

    /** The engine of GGUF models (llama.cpp inside Fulcrum), shared by every GGUF catalog entry and checkpoint. */
    Gguf gguf();

    /** Trained checkpoints served as models ({@code wandb-artifact:///...}). */
    Checkpoints checkpoints();

    /** Models pulled by name from the Hugging Face Hub ({@code pull: hf.co/{owner}/{repo}[:{quant}]}). */
    Hub hub();

    interface Hub {
        /** The Hub's address; the environment's {@code HF_ENDPOINT} when set, as {@code huggingface_hub} reads it. */
        @WithDefault("${HF_ENDPOINT:https://huggingface.co}")
        String endpoint();

        /**
         * The access token for gated and private repositories; the environment's {@code HF_TOKEN} when unset. Sent only
         * to the Hub's own address, never to the file server it redirects downloads to.
         */
        Optional<String> token();

        /** Where pulled files are kept: {@code blobs/} by sha256, {@code partial/} while they download. */
        @WithDefault("${fulcrum.data-dir}/models")
        Path modelDir();

        /** Attempts of one request after a dropped connection, a 429 or a 5xx, with back-off between them. */
        @WithDefault("8")
        int retries();

        /** The first back-off; each further one doubles, up to {@link #maxRetryDelay()}. */
        @WithDefault("1s")
        Duration retryDelay();

        @WithDefault("30s")
        Duration maxRetryDelay();

        @WithDefault("10s")
        Duration connectTimeout();

        /** A download that receives nothing this long is dropped and resumed. */
        @WithDefault("60s")
        Duration readTimeout();

        /** Files downloaded at once. */
        @WithDefault("2")
        int parallelPulls();
    }

    interface Checkpoints {
        /**
         * Where Fulcrum writes the files of served checkpoints that an engine loads from a directory (LoRA adapters),
         * one directory per checkpoint.
         */
        @WithDefault("${fulcrum.data-dir}/lora")
        Path exportDir();

        /** The export directory as a model server sees it (a shared volume); the export directory when absent. */
        Optional<String> serverDir();

        /** Memory for the weights of built-in checkpoints (least recently used out). */
        @WithDefault("536870912")
        long cacheBytes();
    }

    interface Gguf {
        /** A model, adapter or context unused this long is freed (a request for it loads it again). */
        @WithDefault("15m")
        Duration idleUnload();

        /**
         * A context's or embedder's compute thread waiting this long for work ends, and with it the OpenMP threads
         * llama.cpp keeps for it, which would otherwise slow the other models' contexts (the next request starts
         * another).
         */
        @WithDefault("2s")
        Duration threadIdle();

        /**
         * The most bytes of GGUF files loaded at once (0: no bound): loading another first frees the least recently
         * used models that are not busy.
         */
        @WithDefault("0")
        long memoryBudget();

        /**
         * Contexts per loaded file, one per adapter in use (llama.cpp applies adapters per context): a request for a
         * further checkpoint frees the least recently used idle one, or is 503 while all are busy.
         */
        @WithDefault("4")
        int maxContexts();
    }

    /**
     * Requests of one project running at once on all replicas together; more are answered 429. Replicas lease slots of
     * this limit in table {@code inference_slot_leases} (see {@code gateway.ConcurrencyLimits}).
     */
    @WithDefault("6000")
    int maxConcurrentRequestsPerProject();

    /**
     * How long a replica's lease of concurrency slots lasts without renewal (renewed every third of it): the slots of a
     * replica that died count against their projects' limits until then.
     */
    @WithDefault("30s")
    Duration slotLease();

    /** Tokens (prompt and completion) every team (entity) may use per calendar month (UTC); unset: no quota. */
    OptionalLong monthlyTokenQuota();

    /** Quotas of single teams (entity name to tokens per month), over {@link #monthlyTokenQuota()}. */
    Map<String, Long> teamMonthlyTokenQuotas();

    /** How often the model catalog is re-read from the database (changes made on other replicas). */
    @WithDefault("10s")
    Duration catalogRefresh();

    /**
     * How long a replica keeps an unused share of a team's monthly quota before it gives it back for other replicas
     * (quotas only; see {@code gateway.TokenQuotas}).
     */
    @WithDefault("10s")
    Duration quotaRefresh();

    /** The most tokens of a team's monthly quota a replica takes at a time (quotas only). */
    @WithDefault("10000")
    long quotaChunk();

    /** Usage records written in one batch; a full batch is written at once, a partial one by the scheduler. */
    @WithDefault("500")
    int usageBatchSize();

    interface ModelSettings {
        /**
         * {@code openai-compatible}, {@code builtin} or {@code gguf}; a model with a {@link #gguf()} file is
         * {@code gguf} without saying so.
         */
        @WithDefault("openai-compatible")
        String backend();

        /** A GGUF chat model file served by llama.cpp inside Fulcrum ({@code engine.llama.GgufBackend}). */
        Optional<String> gguf();

        /**
         * A GGUF model pulled from the Hugging Face Hub instead of a {@link #gguf()} file:
         * {@code hf.co/{owner}/{repo}[:{quant}]}, pulled in the background at start-up (served once its digest checks).
         */
        Optional<String> pull();

        /** The branch, tag or commit of {@link #pull()}. */
        @WithDefault("main")
        String revision();

        /**
         * Whether {@code fulcrum-worker} workers train this model (as if it were in
         * {@code fulcrum.training.worker-base-models}): with {@link #gguf()}, the one entry of a base model that the
         * catalog serves, workers train and llama.cpp serves the checkpoints of.
         */
        @WithDefault("false")
        boolean trainable();

        /** GGUF models: CPU threads llama.cpp computes with. */
        @WithDefault("2")
        int threads();

        /** GGUF models: the context (prompt and answer) in tokens, shared by {@link #parallel()} generations. */
        @WithDefault("4096")
        int contextSize();

        /** GGUF models: generations that run at once (llama.cpp batches them); projects share them fairly. */
        @WithDefault("1")
        int parallel();

        /**
         * GGUF models: where a reasoning block ({@code <think>...</think>}) goes when a request does not say:
         * {@code auto} (to {@code reasoning_content}) or {@code none} (left in the content), as llama-server's
         * {@code --reasoning-format}.
         */
        @WithDefault("auto")
        String reasoningFormat();

        /**
         * The upstream's OpenAI base URL, e.g. {@code http://vllm:8000/v1}; several replicas of the model server
         * comma-separated, each optionally weighted with a fragment ({@code http://gpu-1:8000/v1#weight=2}). A host
         * name that resolves to several addresses is one replica per address (see {@link Routing}).
         */
        Optional<String> baseUrl();

        /**
         * How a request chooses a replica: {@code least-outstanding} (power of two random choices, weighted) or
         * {@code prefix-affinity} (requests sharing a prompt prefix go to one replica while its load stays within
         * {@link Routing#affinityLoadBound()} of the mean).
         */
        @WithDefault("least-outstanding")
        String routing();

        /**
         * Models that answer instead, in order, when every replica is ejected or the request failed with 429 or a 5xx
         * after its retries.
         */
        Optional<List<String>> fallbacks();

        Optional<String> apiKey();

        /** The model name sent upstream; default the id. */
        Optional<String> upstreamModel();

        /** {@code root} in the model list; default the id. */
        Optional<String> root();

        @WithDefault("5s")
        Duration connectTimeout();

        /** Longest pause between two pieces of the upstream's answer. */
        @WithDefault("120s")
        Duration timeout();

        /** Requests sent to the upstream at once (connections). */
        @WithDefault("256")
        int maxConcurrency();

        /** Requests waiting for a connection; more are answered 429. */
        @WithDefault("1024")
        int maxQueue();

        /**
         * The largest {@code max_tokens} (or {@code max_completion_tokens}) a request may ask for; more is refused with
         * 400. Unset: no limit here (the upstream applies its own).
         */
        OptionalInt maxTokens();
    }

    /** How the gateway spreads a model's requests over the replicas of its model server (docs/inference.md). */
    Routing routing();

    interface Routing {
        /** Times a request is sent to another replica after a failure before any byte of the answer went out. */
        @WithDefault("2")
        int retries();

        /** Consecutive failures (no connection, a broken answer, a timeout, a 5xx) that eject a replica. */
        @WithDefault("3")
        int consecutiveFailures();

        /** How long a first ejection lasts; each further one lasts this much longer, up to {@link #maxEjection()}. */
        @WithDefault("10s")
        Duration baseEjection();

        @WithDefault("5m")
        Duration maxEjection();

        /** The most replicas of a model ejected at once, in percent of them (at least one). */
        @WithDefault("50")
        int maxEjectedPercent();

        /** How often an ejected replica is probed ({@code GET /health}, else {@code GET {base-url}/models}). */
        @WithDefault("5s")
        Duration probeInterval();

        /** Whether host names are resolved by the gateway, each address one replica (a headless Service's pods). */
        @WithDefault("true")
        boolean resolveHosts();

        /** How often host names are resolved again: new addresses get traffic, addresses gone are drained. */
        @WithDefault("5s")
        Duration dnsRefresh();

        /** DNS servers ({@code host:port}) to ask instead of the system's ({@code /etc/resolv.conf}). */
        Optional<List<String>> dnsServers();

        /**
         * Prefix affinity: a replica takes a request of its prefix while its requests under way stay within this factor
         * of the mean (weighted); otherwise the next replica on the ring does (consistent hashing with bounded loads).
         */
        @WithDefault("1.25")
        double affinityLoadBound();

        /** Prefix affinity: the characters of the prompt's beginning that make its key. */
        @WithDefault("2048")
        int affinityPrefixChars();

        /**
         * LoRA adapters kept loaded per replica; loading one more first unloads the least recently used (vLLM's
         * {@code --max-loras} and {@code --max-cpu-loras} bound the server's own).
         */
        @WithDefault("8")
        int adaptersPerReplica();
    }

    /** The local embedding model (all-MiniLM-L6-v2 on ONNX Runtime, inside the jar). */
    LocalEmbeddings localEmbeddings();

    interface LocalEmbeddings {
        /** Whether the local embedding model is listed and served. */
        @WithDefault("true")
        boolean enabled();

        /** Its model id. */
        @WithDefault("all-minilm-l6-v2")
        String id();

        /** Threads computing embeddings (each request uses one). */
        @WithDefault("2")
        int threads();

        /** Requests of one project waiting for a thread; more are answered 429 {@code model_at_capacity}. */
        @WithDefault("64")
        int maxQueuedPerProject();

        /** Requests of all projects waiting for a thread; more are answered 429. */
        @WithDefault("1024")
        int maxQueued();
    }

    interface Builtin {
        /** Whether the built-in model is in the catalog. */
        @WithDefault("true")
        boolean enabled();

        @WithDefault("fulcrum-tiny")
        String id();

        /** Threads generating with the built-in model (each generation uses one). */
        @WithDefault("2")
        int threads();

        /**
         * max_tokens when a request gives none (lowered to {@code max-total-tokens / n} when a request asks for
         * {@code n} choices).
         */
        @WithDefault("128")
        int defaultMaxTokens();

        /** The largest max_tokens a request may ask for; more is refused with 400 (param {@code max_tokens}). */
        @WithDefault("1024")
        int maxTokens();

        /**
         * The most tokens one request may generate in all its choices, {@code n * max_tokens}; more is refused with 400
         * (param {@code n}).
         */
        @WithDefault("4096")
        int maxTotalTokens();

        /**
         * Requests of one project waiting for a thread of the built-in model; more are answered 429
         * {@code model_at_capacity}.
         */
        @WithDefault("16")
        int maxQueuedPerProject();

        /** Requests of all projects waiting for a thread of the built-in model; more are answered 429. */
        @WithDefault("1024")
        int maxQueued();
    }
}

package dev.fulcrum.inference.catalog;

import java.util.List;

/**
 * A model of the catalog as configured: by {@code source} "config" (application properties, read-only) or "admin" (the
 * admin API, stored with the API key sealed). {@code baseUrls} are the replicas of an {@code openai-compatible} model's
 * server (each optionally {@code #weight=N}; empty for other backends), {@code routing} how a request chooses one
 * ({@link #LEAST_OUTSTANDING} or {@link #PREFIX_AFFINITY}), {@code fallbacks} the models that answer instead, in order.
 * {@code apiKey} is the opened key, kept in memory only. {@code maxTokens} is the largest max_tokens a request may ask
 * for (null: no limit of Fulcrum's own). {@code gguf} is set for the {@code gguf} backend only. {@code trainable}: a
 * base model that {@code fulcrum-worker} workers train.
 */
public record CatalogModel(String id, String backend, List<String> baseUrls, String apiKey, String upstreamModel,
        String root, long connectTimeoutMs, long timeoutMs, int maxConcurrency, int maxQueue, Integer maxTokens,
        String source, Gguf gguf, String routing, List<String> fallbacks, boolean trainable) {

    public static final String OPENAI_COMPATIBLE = "openai-compatible";
    public static final String BUILTIN = "builtin";
    public static final String GGUF = "gguf";
    public static final String LEAST_OUTSTANDING = "least-outstanding";
    public static final String PREFIX_AFFINITY = "prefix-affinity";

    public CatalogModel {
        baseUrls = baseUrls == null ? List.of() : List.copyOf(baseUrls);
        fallbacks = fallbacks == null ? List.of() : List.copyOf(fallbacks);
        routing = routing == null ? LEAST_OUTSTANDING : routing;
    }

    /**
     * A GGUF file served by llama.cpp: its path, CPU threads, context in tokens, generations at once, and where a
     * reasoning block goes by default ({@code reasoning_format}: {@code auto} splits it off, {@code none} keeps it in
     * the content).
     */
    public record Gguf(String path, int threads, int contextSize, int parallel, String reasoningFormat) {

        public Gguf {
            reasoningFormat = reasoningFormat == null ? "auto" : reasoningFormat;
        }
    }

    public String upstreamModelOrId() {
        return upstreamModel == null || upstreamModel.isEmpty() ? id : upstreamModel;
    }

    public String rootOrId() {
        return root == null || root.isEmpty() ? id : root;
    }
}

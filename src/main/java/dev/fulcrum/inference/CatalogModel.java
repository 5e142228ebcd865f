package dev.fulcrum.inference;

/**
 * A model of the catalog as configured: by {@code source} "config" (application properties, read-only) or "admin" (the
 * admin API, stored with the API key sealed). {@code apiKey} is the opened key, kept in memory only. {@code maxTokens}
 * is the largest max_tokens a request may ask for (null: no limit of Fulcrum's own).
 */
public record CatalogModel(String id, String backend, String baseUrl, String apiKey, String upstreamModel, String root,
        long connectTimeoutMs, long timeoutMs, int maxConcurrency, int maxQueue, Integer maxTokens, String source) {

    public static final String OPENAI_COMPATIBLE = "openai-compatible";
    public static final String BUILTIN = "builtin";

    public String upstreamModelOrId() {
        return upstreamModel == null || upstreamModel.isEmpty() ? id : upstreamModel;
    }

    public String rootOrId() {
        return root == null || root.isEmpty() ? id : root;
    }
}

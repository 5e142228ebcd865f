package dev.fulcrum.inference.catalog;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import dev.fulcrum.inference.catalog.ModelCatalog.Change;
import dev.fulcrum.inference.hub.HubName;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** The checks of a catalog model's settings, from the admin API ({@link #check}) and the configuration. */
final class CatalogChecks {

    private CatalogChecks() {
    }

    /**
     * The rules across a change's fields (which fields a backend has, the replicas, the routing, the fallbacks among
     * the models {@code known} holds, the ranges) as one 422 naming every field that breaks one.
     */
    static void check(String id, Change change, Predicate<String> known) {
        List<Violation> violations = new ArrayList<>();
        String field = change.baseUrls() != null ? "base_urls" : "base_url";
        if (change.baseUrl() != null && change.baseUrls() != null) {
            violations.add(Violation.of("Give base_url (one replica) or base_urls (several), not both", "value_error",
                    "body", "base_urls"));
        } else if (CatalogModel.OPENAI_COMPATIBLE.equals(change.backend())) {
            if (change.urls().isEmpty()) {
                violations.add(Violation.of("An http or https URL is required for the openai-compatible backend",
                        "value_error", "body", field));
            }
        } else if (!change.urls().isEmpty()) {
            violations.add(
                    Violation.of("Only the openai-compatible backend has a base URL", "value_error", "body", field));
        }
        if (change.routing() != null && !CatalogModel.OPENAI_COMPATIBLE.equals(change.backend())) {
            violations.add(Violation.of("Only the openai-compatible backend has replicas to route over", "value_error",
                    "body", "routing"));
        }
        if (violations.isEmpty()) {
            checkReplicas(violations, change.backend(), change.urls(),
                    change.routing() == null ? CatalogModel.LEAST_OUTSTANDING : change.routing(),
                    change.fallbacks() == null ? List.of() : change.fallbacks(), id);
            if (change.baseUrls() == null) {
                violations.replaceAll(
                        v -> v.field().equals("base_urls") ? Violation.of(v.msg(), v.type(), "body", "base_url") : v);
            }
        }
        for (String fallback : change.fallbacks() == null ? List.<String> of() : change.fallbacks()) {
            if (!fallback.equals(id) && !known.test(fallback)) {
                violations.add(
                        Violation.of("No model " + fallback + " in the catalog", "value_error", "body", "fallbacks"));
            }
        }
        if (CatalogModel.GGUF.equals(change.backend())) {
            if (change.pull() != null && change.ggufPath() != null) {
                violations.add(Violation.of("Give gguf_path (a file) or pull (a name on the Hub), not both",
                        "value_error", "body", "pull"));
            } else if (change.pull() != null) {
                if (HubName.parse(change.pull()) == null) {
                    violations.add(Violation.of("Must be " + HubName.FORM, "value_error", "body", "pull"));
                }
            } else if (change.ggufPath() == null || change.ggufPath().isBlank()) {
                violations.add(Violation.of(
                        "A GGUF file path (gguf_path) or a name to pull (pull) is required for " + "the gguf backend",
                        "value_error", "body", "gguf_path"));
            }
        } else if (change.ggufPath() != null) {
            violations.add(Violation.of("Only the gguf backend has a GGUF file", "value_error", "body", "gguf_path"));
        } else if (change.pull() != null) {
            violations.add(Violation.of("Only the gguf backend is pulled from the Hub", "value_error", "body", "pull"));
        }
        if (change.revision() != null) {
            if (change.pull() == null) {
                violations.add(Violation.of("A revision is given with pull only", "value_error", "body", "revision"));
            } else if (change.revision().isBlank() || change.revision().length() > 256
                    || !change.revision().matches("[!-~]+")) {
                violations.add(Violation.of("Must be a branch, tag or commit of 1 to 256 characters without spaces",
                        "value_error", "body", "revision"));
            }
        }
        if (Boolean.TRUE.equals(change.trainable()) && !CatalogModel.GGUF.equals(change.backend())) {
            violations.add(
                    Violation.of("Only a gguf model is made trainable here (a base model served elsewhere is named in "
                            + "fulcrum.training.worker-base-models)", "value_error", "body", "trainable"));
        }
        if (change.reasoningFormat() != null && !CatalogModel.GGUF.equals(change.backend())) {
            violations.add(Violation.of("Only the gguf backend reads reasoning blocks", "value_error", "body",
                    "reasoning_format"));
        }
        bounded(violations, "upstream_model", change.upstreamModel());
        bounded(violations, "root", change.root());
        positive(violations, "connect_timeout_ms", change.connectTimeoutMs(), 1);
        positive(violations, "timeout_ms", change.timeoutMs(), 1);
        positive(violations, "max_concurrency", change.maxConcurrency(), 1);
        positive(violations, "max_queue", change.maxQueue(), 0);
        positive(violations, "max_tokens", change.maxTokens(), 1);
        if (change.maxTokens() != null && CatalogModel.BUILTIN.equals(change.backend())) {
            violations.add(Violation.of(
                    "The builtin backend's max_tokens is fulcrum.inference.builtin.max-tokens of the configuration",
                    "value_error", "body", "max_tokens"));
        }
        if (!violations.isEmpty()) {
            throw ApiException.invalid(violations);
        }
    }

    /**
     * The replicas' URLs (http or https, each at most once, weights 1 to 100 as {@code #weight=N}), the routing and the
     * fallbacks (not the model itself, each once) of a model.
     */
    static void checkReplicas(List<Violation> violations, String backend, List<String> urls, String routing,
            List<String> fallbacks, String id) {
        if (CatalogModel.OPENAI_COMPATIBLE.equals(backend)) {
            Set<String> seen = new HashSet<>();
            for (String url : urls) {
                int hash = url.indexOf('#');
                String plain = hash < 0 ? url : url.substring(0, hash);
                if (!httpUrl(plain)) {
                    violations.add(Violation.of(
                            "An http or https URL is required for the openai-compatible backend" + " (" + url + ")",
                            "value_error", "body", "base_urls"));
                } else if (hash >= 0 && !url.substring(hash + 1).matches("weight=(100|[1-9][0-9]?)")) {
                    violations
                            .add(Violation.of("A replica's weight is written #weight=N, N from 1 to 100 (" + url + ")",
                                    "value_error", "body", "base_urls"));
                } else if (!seen.add(plain)) {
                    violations.add(Violation.of("A replica is named once (" + plain + ")", "value_error", "body",
                            "base_urls"));
                }
            }
        }
        if (!CatalogModel.LEAST_OUTSTANDING.equals(routing) && !CatalogModel.PREFIX_AFFINITY.equals(routing)) {
            violations.add(
                    Violation.of("Must be " + CatalogModel.LEAST_OUTSTANDING + " or " + CatalogModel.PREFIX_AFFINITY,
                            "value_error", "body", "routing"));
        }
        Set<String> named = new HashSet<>();
        for (String fallback : fallbacks) {
            if (fallback.equals(id) || !named.add(fallback)) {
                violations.add(Violation.of("A fallback is another model, named once (" + fallback + ")", "value_error",
                        "body", "fallbacks"));
            }
        }
    }

    /** The columns of upstream_model and root hold at most {@link #ModelCatalog.ID_MAX} characters. */
    private static void bounded(List<Violation> violations, String field, String value) {
        if (value != null && value.length() > ModelCatalog.ID_MAX) {
            violations.add(Violation.of("Must be at most " + ModelCatalog.ID_MAX + " characters", "value_error", "body",
                    field));
        }
    }

    private static void positive(List<Violation> violations, String field, Integer value, int min) {
        if (value != null && value < min) {
            violations.add(Violation.of("Must be at least " + min, "value_error", "body", field));
        }
    }

    static boolean httpUrl(String url) {
        try {
            URI uri = URI.create(url);
            return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}

package dev.fulcrum.inference.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.fulcrum.inference.InferenceConfig.ModelSettings;
import dev.fulcrum.inference.hub.HubName;
import dev.fulcrum.inference.hub.ModelPulls;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The catalog's models of the configuration ({@code fulcrum.inference.models."<id>".*}), checked as the admin API
 * checks its own: a setting that breaks a rule stops the start, naming the model and the setting.
 */
final class ConfiguredModels {

    private ConfiguredModels() {
    }

    /** The model configured as {@code id}; a pulled one has its file once {@code pull} is ready. */
    static CatalogModel model(String id, ModelSettings settings, ModelPulls.Pulled pull) {
        if (settings.pull().isPresent() && settings.gguf().isPresent()) {
            throw new IllegalStateException(
                    "fulcrum.inference.models.\"" + id + "\": give gguf (a file) or pull (a name), not both");
        }
        if (settings.pull().isPresent() && HubName.parse(settings.pull().get()) == null) {
            throw new IllegalStateException("fulcrum.inference.models.\"" + id + "\".pull must be " + HubName.FORM
                    + ", not " + settings.pull().get());
        }
        boolean pulled = settings.pull().isPresent();
        String backend = settings.gguf().isPresent() || pulled ? CatalogModel.GGUF : settings.backend();
        if (!backend.equals(CatalogModel.OPENAI_COMPATIBLE) && !backend.equals(CatalogModel.BUILTIN)
                && !backend.equals(CatalogModel.GGUF)) {
            throw new IllegalStateException(
                    "fulcrum.inference.models.\"" + id + "\".backend must be " + CatalogModel.OPENAI_COMPATIBLE + ", "
                            + CatalogModel.BUILTIN + " or " + CatalogModel.GGUF + ", not " + backend);
        }
        if (backend.equals(CatalogModel.GGUF) && settings.gguf().isEmpty() && !pulled) {
            throw new IllegalStateException("fulcrum.inference.models.\"" + id + "\".gguf (a file) is required");
        }
        if (backend.equals(CatalogModel.OPENAI_COMPATIBLE) && settings.baseUrl().isEmpty()) {
            throw new IllegalStateException("fulcrum.inference.models.\"" + id + "\".base-url is required");
        }
        List<String> baseUrls = settings.baseUrl().map(urls -> List.of(urls.split(","))).orElse(List.of()).stream()
                .map(String::strip).filter(url -> !url.isEmpty()).toList();
        List<String> fallbacks = settings.fallbacks().orElse(List.of());
        List<Violation> violations = new ArrayList<>();
        CatalogChecks.checkReplicas(violations, backend, baseUrls, settings.routing(), fallbacks, id);
        if (!List.of("auto", "none").contains(settings.reasoningFormat())) {
            violations.add(Violation.of("Must be auto or none", "value_error", "body", "reasoning-format"));
        }
        if (!violations.isEmpty()) {
            throw new IllegalStateException("fulcrum.inference.models.\"" + id + "\": "
                    + violations.stream().map(v -> v.field() + ": " + v.msg()).toList());
        }
        return new CatalogModel(id, backend, baseUrls, settings.apiKey().orElse(null),
                settings.upstreamModel().orElse(null), settings.root().orElse(null),
                settings.connectTimeout().toMillis(), settings.timeout().toMillis(), settings.maxConcurrency(),
                settings.maxQueue(), backend.equals(CatalogModel.BUILTIN) ? null : maxTokens(settings),
                ModelCatalog.CONFIG,
                settings.gguf().or(
                        () -> pulled ? Optional.ofNullable(pull).map(ModelPulls.Pulled::ggufPath) : Optional.empty())
                        .map(path -> new CatalogModel.Gguf(path, settings.threads(), settings.contextSize(),
                                settings.parallel(), settings.reasoningFormat()))
                        .orElse(null),
                settings.routing(), fallbacks, settings.trainable());
    }

    private static Integer maxTokens(ModelSettings settings) {
        return settings.maxTokens().isPresent() ? settings.maxTokens().getAsInt() : null;
    }

}

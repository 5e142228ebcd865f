package dev.fulcrum.training;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ModelCatalog;

/**
 * Which base models can be trained, and by whom (each must also be in the inference catalog): the inference catalog's
 * built-in model (and {@code fulcrum.training.builtin-base-models}) by the built-in CPU executor,
 * {@code fulcrum.training.worker-base-models} by external workers.
 */
@ApplicationScoped
public class BaseModels {

    @Inject
    TrainingSettings settings;

    @Inject
    InferenceConfig inference;

    @Inject
    ModelCatalog catalog;

    /** A base model must be served by the inference catalog, so that its checkpoints can be served too. */
    public boolean inCatalog(String baseModel) {
        return catalog.contains(baseModel);
    }

    public boolean builtin(String baseModel) {
        return settings.isBuiltin(baseModel)
                || inference.builtin().enabled() && inference.builtin().id().equals(baseModel);
    }

    /** Every trainable base model, for error messages. */
    public java.util.List<String> all() {
        java.util.Set<String> all = new java.util.LinkedHashSet<>();
        if (inference.builtin().enabled()) {
            all.add(inference.builtin().id());
        }
        all.addAll(settings.builtinBaseModels());
        settings.workerBaseModels().stream().filter(m -> !"none".equals(m)).forEach(all::add);
        return java.util.List.copyOf(all);
    }

    public boolean worker(String baseModel) {
        return settings.isWorkerModel(baseModel);
    }
}

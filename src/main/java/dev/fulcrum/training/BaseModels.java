package dev.fulcrum.training;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.ModelCatalog;

/**
 * Which base models can be trained, and by whom (each must also be in the inference catalog): the inference catalog's
 * built-in model (and {@code fulcrum.training.builtin-base-models}) by the built-in CPU executor,
 * {@code fulcrum.training.worker-base-models} and the catalog's models marked {@code trainable} by external workers.
 */
@ApplicationScoped
public class BaseModels {

    @Inject
    TrainingSettings settings;

    @Inject
    ModelCatalog catalog;

    /** A base model must be served by the inference catalog, so that its checkpoints can be served too. */
    public boolean inCatalog(String baseModel) {
        return catalog.contains(baseModel);
    }

    public boolean builtin(String baseModel) {
        return settings.isBuiltin(baseModel)
                || catalog.lookup(baseModel).map(model -> CatalogModel.BUILTIN.equals(model.backend())).orElse(false);
    }

    /** Every trainable base model, for error messages. */
    public java.util.List<String> all() {
        java.util.Set<String> all = new java.util.LinkedHashSet<>();
        catalog.list().stream().filter(model -> CatalogModel.BUILTIN.equals(model.backend()))
                .forEach(model -> all.add(model.id()));
        all.addAll(settings.builtinBaseModels());
        settings.workerBaseModels().stream().filter(m -> !"none".equals(m)).forEach(all::add);
        all.addAll(catalog.trainedByWorkers());
        return java.util.List.copyOf(all);
    }

    /**
     * Trained by external workers: in {@code fulcrum.training.worker-base-models}, or a catalog model of the
     * configuration marked {@code trainable}.
     */
    public boolean worker(String baseModel) {
        return settings.isWorkerModel(baseModel) || catalog.trainedByWorkers(baseModel);
    }

    /** Whether any base model is trained by external workers (the system check then expects one to claim work). */
    public boolean anyWorker() {
        return settings.workerBaseModels().stream().anyMatch(m -> !"none".equals(m))
                || !catalog.trainedByWorkers().isEmpty();
    }
}

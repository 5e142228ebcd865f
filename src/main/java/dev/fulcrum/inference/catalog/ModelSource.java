package dev.fulcrum.inference.catalog;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.ServedModel;

/**
 * Where chat completions find models: every CDI bean of this type is asked, lowest {@link #priority()} first, and the
 * first that knows an id serves it. The {@link ModelCatalog} (configuration and the admin API) is one, at priority 0.
 * Another feature adds models by adding a bean, e.g. trained checkpoints addressed as
 * {@code wandb-artifact:///{entity}/{project}/{model}[:step{N}]} ({@link CheckpointModels}), answered by the engine of
 * their base model.
 */
public interface ModelSource {

    /**
     * The model of that id, if this source serves it. Called on the event loop for every completion, so it must not
     * block: answer from memory, or complete the stage when an asynchronous load is done.
     */
    CompletionStage<Optional<ServedModel>> find(String id);

    /** The model of that id for this caller (a source whose models belong to an entity checks membership). */
    default CompletionStage<Optional<ServedModel>> find(String id, InferenceCaller caller) {
        return find(id);
    }

    /** The models {@code GET /v1/models} lists (a source may serve more than it lists). */
    List<ServedModel> listed();

    default int priority() {
        return 100;
    }
}

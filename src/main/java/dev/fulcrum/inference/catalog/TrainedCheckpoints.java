package dev.fulcrum.inference.catalog;

import java.util.Optional;

/**
 * The trained models' checkpoints, for {@link CheckpointModels}: implemented by the feature that trains them, which
 * decides who may use them.
 */
public interface TrainedCheckpoints {

    /**
     * The checkpoint of step {@code step} (null: the latest) of the model {@code entity/project/name}, as the current
     * caller sees it: empty when there is no such model or checkpoint; an {@code ApiException} of kind
     * {@code FORBIDDEN} when the caller may not use the model.
     */
    Optional<Checkpoint> find(String entity, String project, String name, Integer step);
}

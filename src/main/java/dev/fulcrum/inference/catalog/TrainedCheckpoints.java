package dev.fulcrum.inference.catalog;

import java.util.Optional;

/**
 * The trained models' checkpoints, for {@link CheckpointModels}: implemented by the feature that trains them, which
 * decides who may use them.
 */
public interface TrainedCheckpoints {

    /**
     * The checkpoint {@code version} names of the model {@code entity/project/name}, as the current caller sees it:
     * {@code latest} (or null) for the latest, {@code step{N}} for step N, else a version of the model's artifact
     * collection ({@code v<N>}, or an alias such as {@code production}). Empty when there is no such model or
     * checkpoint; an {@code ApiException} of kind {@code FORBIDDEN} when the caller may not use the model.
     */
    Optional<Checkpoint> find(String entity, String project, String name, String version);
}

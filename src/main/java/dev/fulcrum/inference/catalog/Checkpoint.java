package dev.fulcrum.inference.catalog;

/**
 * A trained checkpoint as the catalog serves it: the model it belongs to ({@code entity/project/name}), the base model
 * it was trained from, its step (0: the untrained base) and the artifact version holding its files.
 */
public record Checkpoint(String entity, String project, String name, String baseModel, int step, long versionId) {

    /** The artifact version's name: {@code step{N}}. */
    public String version() {
        return "step" + step;
    }
}

package dev.fulcrum.inference.hub;

/** Fired (CDI) when a model's pull is ready or failed, so that the catalog serves the file, or says why not. */
public record PullFinished(String modelId, boolean ready) {
}

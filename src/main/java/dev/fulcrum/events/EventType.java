package dev.fulcrum.events;

/**
 * The changes automations can react to (of a project or registry), and the server's own events (of no project:
 * {@code MODEL_PULL_*}, a model pulled from the Hugging Face Hub; read by server administrators).
 */
public enum EventType {
    CREATE_ARTIFACT, ADD_ARTIFACT_ALIAS, ADD_ARTIFACT_TAG, REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG,
    REMOVE_COLLECTION_TAG, LINK_ARTIFACT, UNLINK_ARTIFACT, RUN_METRIC, RUN_STATE, WEAVE_METRIC_THRESHOLD,
    MODEL_PULL_PROGRESS, MODEL_PULL_COMPLETED, MODEL_PULL_FAILED
}

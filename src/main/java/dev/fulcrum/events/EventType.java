package dev.fulcrum.events;

/** The changes automations can react to. */
public enum EventType {
    CREATE_ARTIFACT, ADD_ARTIFACT_ALIAS, ADD_ARTIFACT_TAG, LINK_ARTIFACT, RUN_METRIC, RUN_STATE
}

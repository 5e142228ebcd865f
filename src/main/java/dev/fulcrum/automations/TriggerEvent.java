package dev.fulcrum.automations;

import java.util.List;

import dev.fulcrum.events.EventType;

/** The events an automation can watch, and which scopes offer them. */
public enum TriggerEvent {
    ADD_ARTIFACT_ALIAS(true), ADD_ARTIFACT_TAG(true), REMOVE_ARTIFACT_TAG(true), ADD_COLLECTION_TAG(true),
    REMOVE_COLLECTION_TAG(true), LINK_ARTIFACT(true), UNLINK_ARTIFACT(true), CREATE_ARTIFACT(false),
    RUN_METRIC_THRESHOLD(false), RUN_METRIC_CHANGE(false), RUN_METRIC_ZSCORE(false), RUN_STATE(false),
    WEAVE_METRIC_THRESHOLD(false);

    private final boolean inRegistries;

    TriggerEvent(boolean inRegistries) {
        this.inRegistries = inRegistries;
    }

    public boolean inRegistries() {
        return inRegistries;
    }

    public boolean isRunEvent() {
        return this == RUN_METRIC_THRESHOLD || this == RUN_METRIC_CHANGE || this == RUN_METRIC_ZSCORE
                || this == RUN_STATE;
    }

    public boolean isArtifactEvent() {
        return !isRunEvent() && !isWeaveEvent();
    }

    /** An event about the scores recorded on a Weave op's calls. */
    public boolean isWeaveEvent() {
        return this == WEAVE_METRIC_THRESHOLD;
    }

    /** An event about a collection's tags, not about a version: it has no version variables. */
    public boolean isCollectionEvent() {
        return this == ADD_COLLECTION_TAG || this == REMOVE_COLLECTION_TAG;
    }

    /** An event about a tag (of a version or of a collection): it may have a tag regular expression. */
    public boolean isTagEvent() {
        return this == ADD_ARTIFACT_TAG || this == REMOVE_ARTIFACT_TAG || isCollectionEvent();
    }

    /** The automation events a platform event can fire. */
    static List<TriggerEvent> of(EventType type) {
        return switch (type) {
            case CREATE_ARTIFACT -> List.of(CREATE_ARTIFACT);
            case ADD_ARTIFACT_ALIAS -> List.of(ADD_ARTIFACT_ALIAS);
            case ADD_ARTIFACT_TAG -> List.of(ADD_ARTIFACT_TAG);
            case REMOVE_ARTIFACT_TAG -> List.of(REMOVE_ARTIFACT_TAG);
            case ADD_COLLECTION_TAG -> List.of(ADD_COLLECTION_TAG);
            case REMOVE_COLLECTION_TAG -> List.of(REMOVE_COLLECTION_TAG);
            case LINK_ARTIFACT -> List.of(LINK_ARTIFACT);
            case UNLINK_ARTIFACT -> List.of(UNLINK_ARTIFACT);
            case RUN_METRIC -> List.of(RUN_METRIC_THRESHOLD, RUN_METRIC_CHANGE, RUN_METRIC_ZSCORE);
            case RUN_STATE -> List.of(RUN_STATE);
            case WEAVE_METRIC_THRESHOLD -> List.of(WEAVE_METRIC_THRESHOLD);
            case MODEL_PULL_PROGRESS, MODEL_PULL_COMPLETED, MODEL_PULL_FAILED -> List.of(); // the server's own
        };
    }
}

package dev.fulcrum.traces;

import java.util.List;

/**
 * Fired synchronously, in the writing transaction, when calls of a project ended or feedback was added to it: the
 * features that watch scores ({@link CallScores}: automations' Weave metric conditions) read them again in the same
 * transaction. {@code project} is its {@code entity/project}.
 */
public record ScoresRecorded(long projectId, String project, List<String> endedCalls, List<String> feedbackTypes) {
}

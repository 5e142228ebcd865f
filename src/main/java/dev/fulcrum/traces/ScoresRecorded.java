package dev.fulcrum.traces;

import java.util.List;

/**
 * Fired synchronously, in the writing transaction, when calls of a project ended (or started: an end may come first,
 * and its op is known only with the start; {@code endedCalls} are candidates, {@link CallScores#endedOps} keeps the
 * ended ones) or feedback was added to it: the features that watch scores ({@link CallScores}: automations' Weave
 * metric conditions) read them again in the same transaction. {@code project} is its {@code entity/project}.
 */
public record ScoresRecorded(long projectId, String project, List<String> endedCalls, List<String> feedbackTypes) {
}

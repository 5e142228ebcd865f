package dev.fulcrum.traces;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

/**
 * The scores recorded on calls of a Weave op, for the features that watch them (automations' Weave metric conditions):
 * the traces package owns {@code weave_calls} and {@code weave_feedback}, and this is how others read them. A score is
 * a number or a boolean (1 or 0) at a path in a call's output ({@code output.scores.exact.correct} in an evaluation's
 * {@code predict_and_score} calls, {@code output.correct} in a scorer's own calls) or in the payload of feedback of one
 * type on the op's calls ({@code feedback.[wandb.runnable.exact].payload.output.correct}: what a scorer records on the
 * call it scored, in Weave's own selector form). Aggregates are one statement over an index of the op's values, newest
 * first ({@link CallStatements}).
 */
@ApplicationScoped
public class CallScores {

    private static final Pattern KEY = Pattern.compile("[^.\\[\\]]+");
    private static final Pattern FEEDBACK = Pattern.compile("feedback\\.\\[([^\\[\\]]+)]\\.payload((?:\\.[^.]+)*)");

    @Inject
    EntityManager em;

    /**
     * Where a score is read: the call's output, or the payload of feedback of {@code feedbackType}, at {@code keys}.
     */
    public record Path(String feedbackType, List<String> keys) {

        /**
         * The path of {@code text}: {@code output[.key...]} or {@code feedback.[type].payload[.key...]}; empty when it
         * is neither.
         */
        public static Optional<Path> parse(String text) {
            if (text == null) {
                return Optional.empty();
            }
            String keys;
            String type = null;
            if (text.equals("output") || text.startsWith("output.")) {
                keys = text.substring("output".length());
            } else {
                Matcher feedback = FEEDBACK.matcher(text);
                if (!feedback.matches()) {
                    return Optional.empty();
                }
                type = feedback.group(1);
                keys = feedback.group(2);
            }
            List<String> parts = new ArrayList<>();
            if (!keys.isEmpty()) {
                for (String key : keys.substring(1).split("\\.", -1)) {
                    if (!KEY.matcher(key).matches()) {
                        return Optional.empty();
                    }
                    parts.add(key);
                }
            }
            return Optional.of(new Path(type, List.copyOf(parts)));
        }

        public boolean ofFeedback() {
            return feedbackType != null;
        }
    }

    public enum Aggregation {
        MAX, MIN, AVERAGE
    }

    /** An aggregate and the number of values it was taken over. */
    public record Aggregate(double value, int count) {
    }

    /**
     * The aggregate of the op's latest {@code lastValues} scores at {@code path} (only when there are that many), or of
     * its scores of the last {@code seconds} seconds (at least one): a call's by when it ended, feedback by when it was
     * added. {@code project} is the project's {@code entity/project}, which feedback refers to calls with.
     */
    public Optional<Aggregate> aggregate(long projectId, String project, String op, Path path, Aggregation aggregation,
            Integer lastValues, Integer seconds) {
        return CallStatements.aggregate(em, projectId, project, op, path, aggregation, lastValues, seconds);
    }

    /** The ops (their names as users give them) of those of the calls {@code ids} that have ended. */
    public List<String> endedOps(long projectId, List<String> ids) {
        return CallStatements.endedOps(em, projectId, ids);
    }
}

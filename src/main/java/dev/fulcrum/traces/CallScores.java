package dev.fulcrum.traces;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The scores recorded on calls of a Weave op, for the features that watch them (automations' Weave metric conditions):
 * the traces package owns {@code weave_calls} and {@code weave_feedback}, and this is how others read them. A score is
 * a number or a boolean (1 or 0) at a path in a call's output ({@code output.scores.exact.correct} in an evaluation's
 * {@code predict_and_score} calls, {@code output.correct} in a scorer's own calls) or in the payload of feedback of one
 * type on the op's calls ({@code feedback.[wandb.runnable.exact].payload.output.correct}: what a scorer records on the
 * call it scored, in Weave's own selector form). Aggregates are one statement over an index of the op's values, newest
 * first.
 */
@ApplicationScoped
public class CallScores {

    /** An op's name as users give it: a published op's ref stripped to its name (V102's index repeats it). */
    static final String OP = "split_part(regexp_replace(op_name, '^weave:///[^/]+/[^/]+/op/', ''), ':', 1)";

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
        String function = switch (aggregation) {
            case MAX -> "max";
            case MIN -> "min";
            case AVERAGE -> "avg";
        };
        String value = """
                case jsonb_typeof(x) when 'number' then cast(x #>> '{}' as float8)
                when 'boolean' then case when cast(x #>> '{}' as boolean) then 1.0 else 0.0 end end""";
        List<Object> params = new ArrayList<>(List.of(projectId, op, path.keys().toArray(String[]::new)));
        String values;
        if (path.ofFeedback()) {
            params.add(path.feedbackType());
            params.add("weave:///" + project + "/call/");
            values = """
                    select cast(f.payload as jsonb) #> cast(?3 as text[]) as x, f.created_at as at
                    from weave_feedback f join weave_calls c on c.project_id = f.project_id
                        and c.id = substr(f.weave_ref, length(?5) + 1)
                    where f.project_id = ?1 and f.feedback_type = ?4 and starts_with(f.weave_ref, ?5)
                        and c.deleted_at is null and %s = ?2
                        and jsonb_typeof(cast(f.payload as jsonb) #> cast(?3 as text[])) in ('number', 'boolean')
                        %s
                    order by f.created_at desc, f.id desc""".formatted(OP.replace("op_name", "c.op_name"),
                    seconds == null ? "" : "and f.created_at >= now() - make_interval(secs => ?6)");
        } else {
            values = """
                    select cast(output as jsonb) #> cast(?3 as text[]) as x, ended_at as at from weave_calls
                    where project_id = ?1 and %s = ?2 and deleted_at is null and ended_at is not null
                        and jsonb_typeof(cast(output as jsonb) #> cast(?3 as text[])) in ('number', 'boolean')
                        %s
                    order by ended_at desc""".formatted(OP,
                    seconds == null ? "" : "and ended_at >= now() - make_interval(secs => ?4)");
        }
        // the window's parameter comes last in either statement
        if (seconds != null) {
            params.add((double) seconds);
        } else {
            params.add(lastValues);
            values = values + " limit ?" + params.size();
        }
        String sql = "select " + function + "(" + value + "), count(*) from (" + values + ") v";
        return NativeSql.first(em, sql, row -> {
            long count = ((Number) row.value(1)).longValue();
            Object aggregate = row.value(0);
            if (aggregate == null || count == 0 || (lastValues != null && count < lastValues)) {
                return null;
            }
            return new Aggregate(((Number) aggregate).doubleValue(), (int) count);
        }, params.toArray());
    }

    /** The ops (their names as users give them) of those of the calls {@code ids} that have ended. */
    public List<String> endedOps(long projectId, List<String> ids) {
        return NativeSql.list(em, """
                select distinct %s from weave_calls
                where project_id = ?1 and id = any(?2) and ended_at is not null and deleted_at is null""".formatted(OP),
                row -> row.string(0), projectId, ids.toArray(String[]::new));
    }
}

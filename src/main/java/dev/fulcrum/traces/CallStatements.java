package dev.fulcrum.traces;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.traces.CallScores.Aggregate;
import dev.fulcrum.traces.CallScores.Aggregation;
import dev.fulcrum.traces.CallScores.Path;

/**
 * The SQL of {@code weave_calls}' writes ({@link CallWrites}: upserts of starts, ends and whole calls, deletes and
 * renames) and of the scores read from calls and their feedback ({@link CallScores}). The reads of calls are
 * {@link CallQueryStatements}'.
 */
final class CallStatements {

    /** The columns of a call's start, an end and a whole call, in the order of a row's values. */
    static final List<String> START = List.of("project_id", "id", "trace_id", "parent_id", "op_name", "display_name",
            "thread_id", "turn_id", "started_at", "attributes", "inputs", "wb_user_id", "wb_run_id", "wb_run_step");
    static final List<String> END = List.of("project_id", "id", "ended_at", "exception", "output", "summary",
            "wb_run_step_end");
    static final List<String> COMPLETE = List.of("project_id", "id", "trace_id", "parent_id", "op_name", "display_name",
            "thread_id", "turn_id", "started_at", "ended_at", "exception", "attributes", "inputs", "output", "summary",
            "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end");
    /** The columns of numbers (the others go as text, times and JSON cast by the statement). */
    static final Set<String> NUMBERS = Set.of("project_id", "wb_run_step", "wb_run_step_end");
    static final Set<String> TIMES = Set.of("started_at", "ended_at");
    private static final String START_UPSERT = upsert(START);
    private static final String END_UPSERT = upsert(END);
    private static final String COMPLETE_UPSERT = unnestUpsert(COMPLETE);

    /** An op's name as users give it: a published op's ref stripped to its name (V102's index repeats it). */
    static final String OP = "split_part(regexp_replace(op_name, '^weave:///[^/]+/[^/]+/op/', ''), ':', 1)";

    private CallStatements() {
    }

    /**
     * Writes the columns of a call (a row of parameters); a call already there takes the values, except its display
     * name where it has one (a call renamed, or started twice, keeps the name it has).
     */
    private static String upsert(List<String> columns) {
        List<String> values = IntStream.rangeClosed(1, columns.size()).mapToObj(i -> "?" + i).toList();
        return "insert into weave_calls (" + String.join(", ", columns) + ") values (" + String.join(", ", values) + ")"
                + onConflict(columns);
    }

    /** {@link #upsert}, the rows as one array a column: a statement for any number of calls. */
    private static String unnestUpsert(List<String> columns) {
        List<String> selected = columns.stream().map(c -> TIMES.contains(c) ? "cast(" + c + " as timestamptz)" : c)
                .toList();
        List<String> arrays = IntStream.range(0, columns.size()).mapToObj(
                i -> "cast(?" + (i + 1) + " as " + (NUMBERS.contains(columns.get(i)) ? "bigint" : "text") + "[])")
                .toList();
        return "insert into weave_calls (" + String.join(", ", columns) + ") select " + String.join(", ", selected)
                + " from unnest(" + String.join(", ", arrays) + ") as r(" + String.join(", ", columns) + ")"
                + onConflict(columns);
    }

    private static String onConflict(List<String> columns) {
        return " on conflict (project_id, id) do update set " + String.join(", ",
                columns.stream().filter(c -> !c.equals("project_id") && !c.equals("id"))
                        .map(c -> c.equals("display_name")
                                ? "display_name = coalesce(weave_calls.display_name, excluded.display_name)"
                                : c + " = excluded." + c)
                        .toList());
    }

    /** Upserts starts, a row of {@link #START}'s values each. */
    static void start(EntityManager em, List<Object[]> rows) {
        NativeSql.batch(em, START_UPSERT, rows);
    }

    /** Upserts ends, a row of {@link #END}'s values each. */
    static void end(EntityManager em, List<Object[]> rows) {
        NativeSql.batch(em, END_UPSERT, rows);
    }

    /** Upserts whole calls (a row of {@link #COMPLETE}'s values each, one call a row) in one statement. */
    static void complete(EntityManager em, List<Object[]> rows) {
        Object[] arrays = new Object[COMPLETE.size()];
        for (int column = 0; column < COMPLETE.size(); column++) {
            Object[] values = NUMBERS.contains(COMPLETE.get(column)) ? new Long[rows.size()] : new String[rows.size()];
            for (int i = 0; i < rows.size(); i++) {
                values[i] = rows.get(i)[column];
            }
            arrays[column] = values;
        }
        NativeSql.update(em, COMPLETE_UPSERT, arrays);
    }

    /** Deletes the project's calls {@code ids} and their descendants; answers how many. */
    static int delete(EntityManager em, long projectId, List<String> ids) {
        return NativeSql.update(em, """
                with recursive doomed(id) as (
                    select id from weave_calls where project_id = ?1 and id = any(?2) and deleted_at is null
                    union
                    select c.id from weave_calls c join doomed d on c.parent_id = d.id
                    where c.project_id = ?1 and c.deleted_at is null)
                update weave_calls set deleted_at = now()
                where project_id = ?1 and id in (select id from doomed)""", projectId, ids.toArray(String[]::new));
    }

    /** Renames the project's call; answers how many calls were renamed (0 or 1). */
    static int rename(EntityManager em, long projectId, String id, String displayName) {
        return NativeSql.update(em,
                "update weave_calls set display_name = ?1 where project_id = ?2 and id = ?3 and deleted_at is null",
                NativeSql.typed(displayName, String.class), projectId, id);
    }

    /** {@link CallScores#aggregate}'s statement. */
    static Optional<Aggregate> aggregate(EntityManager em, long projectId, String project, String op, Path path,
            Aggregation aggregation, Integer lastValues, Integer seconds) {
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
    static List<String> endedOps(EntityManager em, long projectId, List<String> ids) {
        return NativeSql.list(em, """
                select distinct %s from weave_calls
                where project_id = ?1 and id = any(?2) and ended_at is not null and deleted_at is null""".formatted(OP),
                row -> row.string(0), projectId, ids.toArray(String[]::new));
    }
}

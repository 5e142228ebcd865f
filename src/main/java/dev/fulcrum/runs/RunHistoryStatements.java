package dev.fulcrum.runs;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The SQL that reads a run's history rows ({@code run_history}) besides logging (that is {@link RunStatements}'s): one
 * metric's latest values, the rows between two steps, and the media values kept beside a row's numbers.
 */
final class RunHistoryStatements {

    private RunHistoryStatements() {
    }

    /** The run's latest {@code count} numeric values of {@code metric}, newest first (rows without it are skipped). */
    static List<Double> latest(EntityManager em, long runId, String metric, int count) {
        return NativeSql.list(em, """
                select cast(val ->> ?2 as float8) from run_history
                where run_id = ?1 and jsonb_typeof(val -> ?2) = 'number' order by seq desc limit ?3""",
                row -> ((Number) row.value(0)).doubleValue(), runId, metric, count);
    }

    /**
     * The texts of the run's history rows whose step is in {@code [minStep, maxStep)}, in logged order, at most
     * {@code limit}; with keys, only the rows holding every one of them.
     */
    static <T> List<T> between(EntityManager em, long runId, long minStep, long maxStep, List<String> wanted, int limit,
            Function<String, T> reader) {
        return NativeSql.list(em,
                "select cast(h.val as text) from run_history h where h.run_id = ?1 and h.step >= ?2 and h.step < ?3"
                        + (wanted.isEmpty() ? "" : " and jsonb_exists_all(h.val, cast(?5 as text[]))")
                        + " order by h.seq limit ?4",
                row -> reader.apply(row.string(0)), runId, minStep, maxStep, limit, NativeSql.textArray(wanted));
    }

    /**
     * Sets the media values (JSON object texts; null for a row without) of the run's last {@code texts.length} rows.
     */
    static void keepMedia(EntityManager em, long runId, String[] texts) {
        NativeSql.update(em, """
                update run_history h set media = cast(t.m as jsonb)
                from unnest(cast(?2 as text[])) with ordinality as t(m, n), runs r
                where r.id = ?1 and h.run_id = ?1 and h.seq = r.row_count - ?3 + t.n - 1 and t.m is not null""", runId,
                texts, texts.length);
    }

    /**
     * The step and media text of the run's rows that have media, in logged order: {@code limit} from {@code offset}.
     */
    static <T> List<T> mediaRows(EntityManager em, long runId, int limit, int offset, BiFunction<Long, String, T> row) {
        return NativeSql.list(em, """
                select step, cast(media as text) from run_history where run_id = ?1 and media is not null
                order by seq limit ?2 offset ?3""", r -> row.apply(r.longValue(0), r.string(1)), runId, limit, offset);
    }

    /** Each row with media values, in logged order: its step and media text. */
    static void media(EntityManager em, long runId, BiConsumer<Long, String> each) {
        NativeSql.list(em,
                "select step, cast(media as text) from run_history where run_id = ?1 and media is not null order by seq",
                row -> {
                    each.accept(row.longValue(0), row.string(1));
                    return null;
                }, runId);
    }
}

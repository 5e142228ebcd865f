package dev.fulcrum.runs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.runs.RunFilter.And;
import dev.fulcrum.runs.RunFilter.Column;
import dev.fulcrum.runs.RunFilter.Condition;
import dev.fulcrum.runs.RunFilter.Field;
import dev.fulcrum.runs.RunFilter.Json;
import dev.fulcrum.runs.RunFilter.Op;
import dev.fulcrum.runs.RunFilter.Or;

/** The SQL of a run filter: its shape, and every value a bound parameter, never in the text. */
class RunSearchSqlTest {

    private static final Field STATE = new Field(Column.STATE, List.of());
    private static final Field LR = new Field(Column.CONFIG, List.of("lr"));

    @Test
    void conditionsBecomeSqlWithParameters() {
        Map.Entry<String, List<Object>> sql = RunSearchStatements
                .sqlOf(new And(List.of(new Condition(STATE, Op.EQ, "x' or 1=1"),
                        new Or(List.of(new Condition(LR, Op.GT, new BigDecimal("0.01")),
                                new Condition(new Field(Column.TAGS, List.of()), Op.IN, List.of("a", "b")))))));
        assertEquals("(r.state = cast(?2 as text) and (coalesce((case when jsonb_typeof((r.config #> cast(?3 as"
                + " text[]))) = 'number' then cast((r.config #> cast(?3 as text[])) as numeric) end) > cast(?4 as"
                + " numeric), false) or r.tags && cast(?5 as text[])))", sql.getKey());
        assertFalse(sql.getKey().contains("or 1=1"), sql.getKey());
        assertEquals("x' or 1=1", sql.getValue().get(0));
        assertEquals(List.of("lr"), ((NativeSql.TextArray) sql.getValue().get(1)).values());
        assertEquals(new BigDecimal("0.01"), sql.getValue().get(2));
        assertEquals(List.of("a", "b"), ((NativeSql.TextArray) sql.getValue().get(3)).values());
    }

    @Test
    void jsonEqualityAndMissingValues() {
        Map.Entry<String, List<Object>> eq = RunSearchStatements.sqlOf(new Condition(LR, Op.EQ, new Json("0.1")));
        assertEquals("coalesce((r.config #> cast(?2 as text[])) = cast(?3 as jsonb), false)", eq.getKey());
        assertEquals("0.1", eq.getValue().get(1));
        Map.Entry<String, List<Object>> none = RunSearchStatements.sqlOf(new Condition(LR, Op.EQ, null));
        assertEquals("((r.config #> cast(?2 as text[])) is null or (r.config #> cast(?2 as text[])) = 'null'::jsonb)",
                none.getKey());
        Map.Entry<String, List<Object>> nin = RunSearchStatements
                .sqlOf(new Condition(STATE, Op.NIN, List.of("failed")));
        assertEquals("not coalesce(r.state = any(cast(?2 as text[])), false)", nin.getKey());
        assertEquals("true", RunSearchStatements.sqlOf(new And(List.of())).getKey());
        assertEquals("false", RunSearchStatements.sqlOf(new Or(List.of())).getKey());
    }
}

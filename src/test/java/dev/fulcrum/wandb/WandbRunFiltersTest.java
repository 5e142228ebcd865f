package dev.fulcrum.wandb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.runs.RunFilter;
import dev.fulcrum.runs.RunFilter.And;
import dev.fulcrum.runs.RunFilter.Column;
import dev.fulcrum.runs.RunFilter.Condition;
import dev.fulcrum.runs.RunFilter.Field;
import dev.fulcrum.runs.RunFilter.Json;
import dev.fulcrum.runs.RunFilter.Op;
import dev.fulcrum.runs.RunFilter.Or;
import dev.fulcrum.runs.RunFilter.Order;

/** The SDK's {@code filters} and {@code order} read into a run filter, and what is refused. */
class WandbRunFiltersTest {

    @Test
    void theSdksFiltersAreRead() {
        assertEquals(new And(List.of()), WandbRunFilters.parse("{}"));
        assertEquals(new Condition(new Field(Column.STATE, List.of()), Op.EQ, "finished"),
                WandbRunFilters.parse("{\"state\": \"finished\"}"));
        assertEquals(new Condition(new Field(Column.CONFIG, List.of("opt", "lr")), Op.GT, new BigDecimal("0.01")),
                WandbRunFilters.parse("{\"config.opt.lr.value\": {\"$gt\": 0.01}}"));
        assertEquals(
                new Condition(new Field(Column.SUMMARY, List.of("loss")), Op.IN,
                        List.of(new Json("1"), new Json("\"a\""), new Json("null"))),
                WandbRunFilters.parse("{\"summary_metrics.loss\": {\"$in\": [1, \"a\", null]}}"));
        RunFilter or = WandbRunFilters
                .parse("{\"$or\": [{\"tags\": {\"$in\": [\"a\"]}}, {\"display_name\": {\"$regex\": \"^b\"}}]}");
        assertInstanceOf(Or.class, or);
        Condition regex = (Condition) ((Or) or).parts().get(1);
        assertEquals(Op.REGEX, regex.op());
        RunFilter both = WandbRunFilters
                .parse("{\"state\": {\"$ne\": \"failed\", \"$exists\": true}, \"name\": \"r\"}");
        assertEquals(3, ((And) both).parts().size());
        assertEquals(new Order(new Field(Column.CREATED_AT, List.of()), true), WandbRunFilters.order("-created_at"));
        assertEquals(new Order(new Field(Column.SUMMARY, List.of("loss")), false),
                WandbRunFilters.order("+summary_metrics.loss"));
        assertEquals(new Order(new Field(Column.CONFIG, List.of("lr")), false), WandbRunFilters.order("config.lr"));
    }

    @Test
    void anythingElseIsRefusedByName() {
        for (String[] refused : new String[][] { { "{\"state\": {\"$not\": \"a\"}}", "$not" },
                { "{\"$nor\": []}", "$nor" }, { "{\"jobType\": \"a\"}", "jobType" }, { "{\"config.\": 1}", "config." },
                { "{\"tags\": {\"$gt\": \"a\"}}", "tags" }, { "{\"state\": {\"$gt\": 1}}", "$gt" },
                { "{\"created_at\": {\"$in\": []}}", "$in" }, { "{\"created_at\": \"yesterday\"}", "ISO-8601" },
                { "{\"state\": {\"$exists\": 1}}", "$exists" }, { "{\"config.a\": 1e999}", "finite" },
                { "not json", "JSON object" },
                { "{\"$and\": [" + "{\"$and\": [".repeat(9) + "]}".repeat(9) + "]}", "levels" } }) {
            ApiException e = assertThrows(ApiException.class, () -> WandbRunFilters.parse(refused[0]), refused[0]);
            assertTrue(e.getMessage().contains(refused[1]) || String.valueOf(e.violations()).contains(refused[1]),
                    refused[0] + ": " + e.getMessage() + " " + e.violations());
        }
        assertThrows(ApiException.class, () -> WandbRunFilters.order("tags"));
        assertThrows(ApiException.class, () -> WandbRunFilters.order("-group"));
    }
}

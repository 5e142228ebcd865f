package dev.fulcrum.wandb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.fulcrum.automations.AutomationCondition;
import dev.fulcrum.automations.AutomationCondition.Aggregation;
import dev.fulcrum.automations.TriggerEvent;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.wandb.WandbEventFilters.Conditions;

/** The SDK's event filters (as {@code wandb} 0.31.0 writes them) as automation conditions, and back. */
class WandbEventFiltersTest {

    @Test
    void anAliasEqualityIsAQuotedRegexAndReadsBackAsEquality() {
        Conditions parsed = WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_ALIAS,
                "{\"$or\": [{\"$and\": [{\"alias\": {\"$eq\": \"prod.v1\"}}]}]}");
        assertEquals("^prod\\.v1$", parsed.aliasRegex());
        String saved = WandbEventFilters.saved(TriggerEvent.ADD_ARTIFACT_ALIAS,
                AutomationCondition.of(parsed.aliasRegex(), null, null, null, null, null));
        assertEquals("{\"filter\":\"{\\\"$or\\\":[{\\\"$and\\\":[{\\\"alias\\\":{\\\"$eq\\\":\\\"prod.v1\\\"}}]}]}\"}",
                saved);
        // the saved form is accepted back (update_automation sends what it read)
        assertEquals("^prod\\.v1$", WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_ALIAS, saved).aliasRegex());
        assertEquals("^(a|b)$", WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_ALIAS,
                "{\"$or\": [{\"$and\": [{\"alias\": {\"$regex\": \"^(a|b)$\"}}]}]}").aliasRegex());
        assertNull(WandbEventFilters.literal("^(a|b)$"));
    }

    @Test
    void aTagFilterIsTheTagRegex() {
        Conditions parsed = WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_TAG,
                "{\"$or\": [{\"$and\": [{\"tag\": {\"$eq\": \"reviewed\"}}]}]}");
        assertEquals("^reviewed$", parsed.tagRegex());
        assertNull(parsed.aliasRegex());
        String saved = WandbEventFilters.saved(TriggerEvent.ADD_ARTIFACT_TAG,
                AutomationCondition.of(null, null, null, null, null, null).withTagRegex(parsed.tagRegex()));
        assertTrue(saved.contains("tag") && saved.contains("reviewed"), saved);
        assertEquals(parsed, WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_TAG, saved));
        assertNull(WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_TAG, "{\"$or\": [{\"$and\": []}]}").tagRegex());
    }

    @Test
    void theTagAndUnlinkEventsOfTheSdkAreFulcrums() {
        for (String type : List.of("REMOVE_ARTIFACT_TAG", "ADD_COLLECTION_TAG", "REMOVE_COLLECTION_TAG")) {
            TriggerEvent event = WandbEventFilters.event(type);
            assertEquals(type, WandbEventFilters.sdkType(event));
            assertEquals("^prod$", WandbEventFilters
                    .parse(event, "{\"$or\": [{\"$and\": [{\"tag\": {\"$eq\": \"prod\"}}]}]}").tagRegex());
        }
        assertEquals(TriggerEvent.UNLINK_ARTIFACT, WandbEventFilters.event("UNLINK_ARTIFACT"));
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.UNLINK_ARTIFACT,
                "{\"$or\": [{\"$and\": [{\"tag\": {\"$eq\": \"prod\"}}]}]}"));
        assertThrows(ApiException.class, () -> WandbEventFilters.event("UPDATE_ARTIFACT_ALIAS"));
    }

    @Test
    void aThresholdWithARunFilterIsFulcrumsCondition() {
        Conditions parsed = WandbEventFilters.parse(TriggerEvent.RUN_METRIC_THRESHOLD, """
                {"run_filter": "{\\"$and\\": [{\\"name\\": {\\"$regex\\": \\"^train-\\"}}, \
                {\\"username\\": {\\"$eq\\": \\"ada\\"}}]}",
                 "run_metric_filter": {"threshold_filter": {"name": "loss", "agg_op": "AVERAGE",
                 "window_size": 5, "cmp_op": "$lt", "threshold": 0.1}}}""");
        assertEquals("^train-", parsed.runNameRegex());
        assertEquals("ada", parsed.runCreator());
        assertEquals("loss", parsed.threshold().metric());
        assertEquals(Aggregation.AVERAGE, parsed.threshold().aggregation());
        assertEquals(5, parsed.threshold().window());
        assertEquals("<", parsed.threshold().comparison());
        String saved = WandbEventFilters.saved(TriggerEvent.RUN_METRIC_THRESHOLD, AutomationCondition.of(null,
                parsed.runCreator(), parsed.runNameRegex(), parsed.threshold(), null, null));
        assertTrue(saved.contains("\"cmp_op\":\"$lt\"") && saved.contains("\"window_size\":5"), saved);
        assertEquals(parsed, WandbEventFilters.parse(TriggerEvent.RUN_METRIC_THRESHOLD, saved));
    }

    @Test
    void changesAndStatesRoundTrip() {
        Conditions change = WandbEventFilters.parse(TriggerEvent.RUN_METRIC_CHANGE, """
                {"run_filter": "{\\"$and\\": []}", "run_metric_filter": {"change_filter": {"name": "acc",
                 "agg_op": null, "current_window_size": 1, "prior_window_size": 1, "change_type": "RELATIVE",
                 "change_dir": "DECREASE", "change_amount": 0.2}}}""");
        assertTrue(change.change().relative());
        assertEquals("DECREASE", change.change().direction());
        assertEquals(change,
                WandbEventFilters.parse(TriggerEvent.RUN_METRIC_CHANGE,
                        WandbEventFilters.saved(TriggerEvent.RUN_METRIC_CHANGE,
                                AutomationCondition.of(null, null, null, null, change.change(), null))));
        Conditions zscore = WandbEventFilters.parse(TriggerEvent.RUN_METRIC_ZSCORE, """
                {"run_filter": "{\\"$and\\": []}", "run_metric_filter": {"zscore_filter": {"name": "loss",
                 "window_size": 10, "threshold": 2.5, "change_dir": "INCREASE"}}}""");
        assertEquals(new AutomationCondition.ZScore("loss", 10, 2.5, "INCREASE"), zscore.zscore());
        assertEquals(zscore,
                WandbEventFilters.parse(TriggerEvent.RUN_METRIC_ZSCORE,
                        WandbEventFilters.saved(TriggerEvent.RUN_METRIC_ZSCORE,
                                AutomationCondition.of(null, null, null, null, null, zscore.zscore(), null))));
        Conditions states = WandbEventFilters.parse(TriggerEvent.RUN_STATE,
                "{\"run_filter\": \"{\\\"$and\\\": []}\", \"run_state_filter\": {\"states\": [\"CRASHED\", \"FINISHED\"]}}");
        assertEquals(List.of("failed", "finished"), states.runStates());
    }

    @Test
    void theSdksRunNameIsTheDisplayNameEqualContainedOrMatched() {
        // RunEvent.name.eq / .contains / .matches_regex, as wandb 0.31.0 writes them
        String[][] cases = { { "{\"$eq\": \"lr-0.1\"}", "^lr-0\\.1$", "$eq" },
                { "{\"$contains\": \"sweep.a\"}", "sweep\\.a", "$contains" },
                { "{\"$regex\": \"^base(line)?$\"}", "^base(line)?$", "$regex" } };
        for (String[] c : cases) {
            String filter = "{\"run_filter\": {\"$and\": [{\"display_name\": " + c[0] + "}]},"
                    + " \"run_state_filter\": {\"states\": [\"FAILED\"]}}";
            Conditions parsed = WandbEventFilters.parse(TriggerEvent.RUN_STATE, filter);
            assertEquals(c[1], parsed.runDisplayNameRegex());
            assertEquals("", parsed.runNameRegex());
            AutomationCondition condition = AutomationCondition.of(null, null, null, null, null, List.of("failed"))
                    .withRunDisplayNameRegex(parsed.runDisplayNameRegex());
            String saved = WandbEventFilters.saved(TriggerEvent.RUN_STATE, condition);
            assertTrue(saved.contains("display_name") && saved.contains(c[2]), saved);
            assertEquals(parsed, WandbEventFilters.parse(TriggerEvent.RUN_STATE, saved));
        }
        AutomationCondition contains = AutomationCondition.of(null, null, null, null, null, null)
                .withRunDisplayNameRegex("sweep\\.a");
        assertTrue(contains.runMatches(null, "r1", "my-sweep.a-3"));
        assertTrue(!contains.runMatches(null, "sweep.a", "other"));
        assertThrows(ApiException.class,
                () -> WandbEventFilters.parse(TriggerEvent.RUN_STATE,
                        "{\"run_filter\": {\"$and\": [{\"display_name\": {\"$contains\": \"\"}}]},"
                                + " \"run_state_filter\": {\"states\": [\"FAILED\"]}}"));
    }

    @Test
    void whatFulcrumCannotKeepIsRefusedNamingIt() {
        ApiException displayName = assertThrows(ApiException.class,
                () -> WandbEventFilters.parse(TriggerEvent.RUN_STATE,
                        "{\"run_filter\": \"{\\\"$and\\\": [{\\\"display_name\\\": {\\\"$ne\\\": \\\"x\\\"}}]}\","
                                + " \"run_state_filter\": {\"states\": [\"FINISHED\"]}}"));
        assertTrue(displayName.getMessage().contains("display name") && displayName.getMessage().contains("$ne"),
                displayName.getMessage());
        ApiException tags = assertThrows(ApiException.class,
                () -> WandbEventFilters.parse(TriggerEvent.RUN_STATE,
                        "{\"run_filter\": {\"$and\": [{\"tags\": {\"$eq\": \"x\"}}]},"
                                + " \"run_state_filter\": {\"states\": [\"FINISHED\"]}}"));
        assertTrue(tags.getMessage().contains("tags"), tags.getMessage());
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.RUN_STATE,
                "{\"run_filter\": \"{\\\"$and\\\": []}\", \"run_state_filter\": {\"states\": [\"RUNNING\"]}}"));
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.LINK_ARTIFACT,
                "{\"$or\": [{\"$and\": [{\"tag\": {\"$eq\": \"x\"}}]}]}"));
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.ADD_ARTIFACT_TAG,
                "{\"$or\": [{\"$and\": [{\"alias\": {\"$eq\": \"x\"}}]}]}"));
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.LINK_ARTIFACT, "[1]"));
        assertThrows(ApiException.class, () -> WandbEventFilters.parse(TriggerEvent.LINK_ARTIFACT, "{\"$or\": "));
        assertThrows(ApiException.class, () -> WandbEventFilters.event("UPDATE_ARTIFACT_ALIAS"));
    }
}

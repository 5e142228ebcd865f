package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import dev.fulcrum.automations.AutomationCondition.Aggregation;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.Automations.AutomationView;
import dev.fulcrum.automations.Automations.Draft;
import dev.fulcrum.automations.Automations.ScopeRef;
import dev.fulcrum.platform.errors.ApiException;

/** The rules an automation's fields follow on their own: each broken rule is a 422 naming the field. */
class AutomationRulesTest {

    private static final Draft TAG = new Draft("notify", null, TriggerEvent.ADD_ARTIFACT_TAG, null, null, null, null,
            null, null, "team", 7L, null, null, null);

    /** {@link #TAG} with some fields changed, by position in the record. */
    private static Draft tag(UnaryOperator<Object[]> change) {
        Object[] f = { TAG.name(), TAG.description(), TAG.event(), TAG.aliasRegex(), TAG.runCreator(),
                TAG.runNameRegex(), TAG.threshold(), TAG.change(), TAG.runStates(), TAG.team(), TAG.webhookId(),
                TAG.payload(), TAG.grantedSecrets(), TAG.enabled() };
        f = change.apply(f);
        @SuppressWarnings("unchecked")
        Draft draft = new Draft((String) f[0], (String) f[1], (TriggerEvent) f[2], (String) f[3], (String) f[4],
                (String) f[5], (Threshold) f[6], (Change) f[7], (List<String>) f[8], (String) f[9], (Long) f[10],
                (String) f[11], (List<String>) f[12], (Boolean) f[13]);
        return draft;
    }

    private static Draft with(int field, Object value) {
        return tag(f -> {
            f[field] = value;
            return f;
        });
    }

    private static Draft event(TriggerEvent event, int field, Object value) {
        return tag(f -> {
            f[2] = event;
            f[field] = value;
            return f;
        });
    }

    /** The violations of the draft's fields as "loc: type", in order. */
    private static List<String> problems(boolean inRegistry, Draft draft) {
        ApiException e = assertThrows(ApiException.class, () -> AutomationRules.checkFields(inRegistry, draft));
        assertEquals(ApiException.Kind.INVALID, e.kind());
        return e.violations().stream()
                .map(v -> String.join(".", v.loc().stream().map(String::valueOf).toList()) + ": " + v.type()).toList();
    }

    private static List<String> payloadProblems(String payload, TriggerEvent event, List<String> granted,
            Set<String> webhookSecrets) {
        ApiException e = assertThrows(ApiException.class,
                () -> AutomationRules.checkPayload(payload, event, granted, webhookSecrets));
        assertEquals(ApiException.Kind.INVALID, e.kind());
        return e.violations().stream().map(v -> v.type() + ": " + v.msg()).toList();
    }

    private static Threshold threshold(String metric, int window, double value) {
        return new Threshold(metric, Aggregation.MAX, window, ">", value);
    }

    private static Change change(String metric, int window, double amount) {
        return new Change(metric, Aggregation.AVERAGE, window, false, "ANY", amount);
    }

    private static AutomationView stored(Draft draft) {
        return new AutomationView(1, draft.name(), draft.description(), new ScopeRef(3L, null, "team", "project", null),
                draft.event(), AutomationRules.condition(draft), draft.team(), 5L, draft.webhookId(), draft.payload(),
                draft.grantedSecrets() == null ? List.of() : draft.grantedSecrets(),
                !Boolean.FALSE.equals(draft.enabled()), null, "alice", "alice", OffsetDateTime.now(),
                OffsetDateTime.now(), null, draft.actionOrWebhooks(), null);
    }

    @Test
    void aValidDraftPasses() {
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, TAG));
        assertDoesNotThrow(() -> AutomationRules.checkFields(true, TAG));
    }

    @Test
    void theNameIsNotBlank() {
        assertEquals(List.of("body.name: value_error"), problems(false, with(0, " ")));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, with(0, "n")));
    }

    @Test
    void registryAutomationsWatchArtifactAliasTagAndLinkEventsOnly() {
        assertEquals(List.of("body.event: enum"), problems(true, with(2, TriggerEvent.CREATE_ARTIFACT)));
        assertEquals(List.of("body.event: enum"), problems(true, event(TriggerEvent.RUN_STATE, 8, null)));
        assertDoesNotThrow(() -> AutomationRules.checkFields(true, with(2, TriggerEvent.LINK_ARTIFACT)));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, with(2, TriggerEvent.CREATE_ARTIFACT)));
    }

    @Test
    void aliasAutomationsNeedAValidRe2AliasRegexAndOnlyThey() {
        assertEquals(List.of("body.alias_regex: missing"), problems(false, with(2, TriggerEvent.ADD_ARTIFACT_ALIAS)));
        assertEquals(List.of("body.alias_regex: missing"),
                problems(false, event(TriggerEvent.ADD_ARTIFACT_ALIAS, 3, "")));
        assertEquals(List.of("body.alias_regex: regex"),
                problems(false, event(TriggerEvent.ADD_ARTIFACT_ALIAS, 3, "(?<=v)1")));
        assertEquals(List.of("body.alias_regex: extra_forbidden"), problems(false, with(3, "prod.*")));
        assertDoesNotThrow(
                () -> AutomationRules.checkFields(false, event(TriggerEvent.ADD_ARTIFACT_ALIAS, 3, "^prod")));
    }

    @Test
    void runFiltersAreForRunEventsAndTheirNameRegexIsValidRe2() {
        assertEquals(List.of("body.run_filter: extra_forbidden"), problems(false, with(4, "alice")));
        assertEquals(List.of("body.run_filter: extra_forbidden"), problems(false, with(5, "run-.*")));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, with(4, "")), "an empty filter is none");
        assertEquals(List.of("body.run_filter.name_regex: regex"),
                problems(false, event(TriggerEvent.RUN_STATE, 5, "(")));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, event(TriggerEvent.RUN_STATE, 5, "run-.*")));
    }

    @Test
    void thresholdAutomationsNeedAMetricThresholdAndOnlyThey() {
        assertEquals(List.of("body.metric_threshold: missing"),
                problems(false, with(2, TriggerEvent.RUN_METRIC_THRESHOLD)));
        assertEquals(List.of("body.metric_threshold: extra_forbidden"),
                problems(false, with(6, threshold("loss", 1, 0.5))));
        assertEquals(List.of("body.metric_threshold.threshold: finite_number"),
                problems(false, event(TriggerEvent.RUN_METRIC_THRESHOLD, 6, threshold("loss", 1, Double.NaN))));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false,
                event(TriggerEvent.RUN_METRIC_THRESHOLD, 6, threshold("loss", 1, -1))));
    }

    @Test
    void changeAutomationsNeedAMetricChangeOfAFiniteNonNegativeAmountAndOnlyThey() {
        assertEquals(List.of("body.metric_change: missing"), problems(false, with(2, TriggerEvent.RUN_METRIC_CHANGE)));
        assertEquals(List.of("body.metric_change: extra_forbidden"), problems(false, with(7, change("loss", 5, 0))));
        assertEquals(List.of("body.metric_change.amount: finite_number"),
                problems(false, event(TriggerEvent.RUN_METRIC_CHANGE, 7, change("loss", 5, -0.1))));
        assertEquals(List.of("body.metric_change.amount: finite_number"),
                problems(false, event(TriggerEvent.RUN_METRIC_CHANGE, 7, change("loss", 1, Double.POSITIVE_INFINITY))));
        assertDoesNotThrow(
                () -> AutomationRules.checkFields(false, event(TriggerEvent.RUN_METRIC_CHANGE, 7, change("l", 1, 0))));
    }

    @Test
    void onlyRunStateAutomationsHaveRunStates() {
        assertEquals(List.of("body.run_states: extra_forbidden"), problems(false, with(8, List.of("failed"))));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, with(8, List.of())), "an empty list is none");
        assertDoesNotThrow(
                () -> AutomationRules.checkFields(false, event(TriggerEvent.RUN_STATE, 8, List.of("failed"))));
    }

    @Test
    void grantedSecretNamesAreUpperCaseLettersDigitsAndUnderscores() {
        // a null name never gets here: the request body's mapper refuses null items (platform/NullItems)
        assertEquals(List.of("body.granted_secrets: string_pattern_mismatch"),
                problems(false, with(12, List.of("token"))));
        assertDoesNotThrow(() -> AutomationRules.checkFields(false, with(12, List.of("GH_TOKEN", "_K2"))));
    }

    @Test
    void grantedSecretsAreStoredWithoutRepeatsAndSorted() {
        assertEquals(List.of("A", "B"), AutomationRules.grantedSecrets(with(12, List.of("B", "A", "B"))));
        assertEquals(List.of(), AutomationRules.grantedSecrets(TAG));
    }

    @Test
    void everyBrokenRuleIsReportedAtOnce() {
        Draft draft = tag(f -> {
            f[0] = "";
            f[2] = TriggerEvent.RUN_STATE;
            f[3] = "x";
            f[12] = List.of("lower");
            return f;
        });
        assertEquals(List.of("body.name: value_error", "body.event: enum", "body.alias_regex: extra_forbidden",
                "body.granted_secrets: string_pattern_mismatch"), problems(true, draft));
    }

    @Test
    void anEmptyRunFilterPartIsStoredAsNone() {
        AutomationCondition condition = AutomationRules.condition(event(TriggerEvent.RUN_STATE, 4, ""));
        assertNull(condition.runCreator());
        assertNull(condition.runNameRegex());
    }

    @Test
    void anUpdateKeepsWhatItDoesNotGiveAndReplacesTheRunFilterAsAWhole() {
        AutomationView stored = stored(tag(f -> {
            f[1] = "old description";
            f[2] = TriggerEvent.RUN_STATE;
            f[4] = "alice";
            f[5] = "run-.*";
            f[11] = "{\"a\":1}";
            return f;
        }));
        Draft merged = AutomationRules.merge(stored,
                new Draft("renamed", null, null, null, "bob", null, null, null, null, null, null, null, null, null));
        assertEquals("renamed", merged.name());
        assertEquals("old description", merged.description());
        assertEquals(TriggerEvent.RUN_STATE, merged.event());
        assertEquals("bob", merged.runCreator());
        assertNull(merged.runNameRegex(), "a new run filter replaces the whole filter");
        assertEquals("team", merged.team());
        assertEquals(7L, merged.webhookId());
        assertEquals("{\"a\":1}", merged.payload());
        assertEquals(Boolean.TRUE, merged.enabled());

        Draft untouched = AutomationRules.merge(stored,
                new Draft(null, null, null, null, null, null, null, null, null, null, null, null, null, null));
        assertEquals("alice", untouched.runCreator());
        assertEquals("run-.*", untouched.runNameRegex());
    }

    @Test
    void theEventOfAnAutomationCannotChange() {
        AutomationView stored = stored(TAG);
        ApiException e = assertThrows(ApiException.class, () -> AutomationRules.merge(stored, new Draft(null, null,
                TriggerEvent.LINK_ARTIFACT, null, null, null, null, null, null, null, null, null, null, null)));
        assertEquals(ApiException.Kind.INVALID, e.kind());
        assertEquals("immutable", e.violations().get(0).type());
        assertEquals(List.of("body", "event"), e.violations().get(0).loc());
        assertDoesNotThrow(() -> AutomationRules.merge(stored, new Draft(null, null, TriggerEvent.ADD_ARTIFACT_TAG,
                null, null, null, null, null, null, null, null, null, null, null)));
    }

    @Test
    void theCallerTakesAnAutomationOverByChangingWhatItSendsWhereOrByEnablingIt() {
        AutomationView stored = stored(tag(f -> {
            f[11] = "{\"a\":1}";
            f[12] = List.of("A", "B");
            f[13] = false;
            return f;
        }));
        Draft same = AutomationRules.merge(stored,
                new Draft("renamed", "new", null, null, null, null, null, null, null, null, null, null, null, null));
        assertFalse(AutomationRules.takesOver(stored, same), "name and description are not what it sends");
        assertFalse(AutomationRules.takesOver(stored, AutomationRules.merge(stored, new Draft(null, null, null, null,
                null, null, null, null, null, null, null, null, List.of("B", "A"), null))), "same secrets");
        assertTrue(AutomationRules.takesOver(stored, AutomationRules.merge(stored,
                new Draft(null, null, null, null, null, null, null, null, null, null, null, null, null, true))));
        assertTrue(AutomationRules.takesOver(stored, AutomationRules.merge(stored,
                new Draft(null, null, null, null, null, null, null, null, null, "other", null, null, null, null))));
        assertTrue(AutomationRules.takesOver(stored, AutomationRules.merge(stored,
                new Draft(null, null, null, null, null, null, null, null, null, null, 8L, null, null, null))));
        assertTrue(AutomationRules.takesOver(stored, AutomationRules.merge(stored,
                new Draft(null, null, null, null, null, null, null, null, null, null, null, "{\"a\":2}", null, null))));
        assertTrue(AutomationRules.takesOver(stored, AutomationRules.merge(stored, new Draft(null, null, null, null,
                null, null, null, null, null, null, null, null, List.of("A"), null))));
    }

    @Test
    void aPayloadUsesOnlyTheEventsVariables() {
        assertDoesNotThrow(() -> AutomationRules.checkPayload("{\"t\":\"${tag} ${artifact_metadata.lr}\"}",
                TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of()));
        assertEquals(List.of("unknown_variable: Unknown variables for ADD_ARTIFACT_TAG: run_name"),
                payloadProblems("{\"r\":\"${run_name}\"}", TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of()));
        assertEquals(List.of("unknown_variable: Unknown variables for RUN_STATE: metric_value"),
                payloadProblems("{\"v\":\"${metric_value}\"}", TriggerEvent.RUN_STATE, List.of(), Set.of()));
        assertDoesNotThrow(() -> AutomationRules.checkPayload("{\"p\":\"${metric_prior_value}\"}",
                TriggerEvent.RUN_METRIC_CHANGE, List.of(), Set.of()));
    }

    @Test
    void aPayloadUsesOnlyGrantedSecretsAndTheAccessTokenOnlyWhenTheWebhookHasOne() {
        assertEquals(List.of("ungranted_secret: Secrets used but not granted (add them to granted_secrets): TOKEN"),
                payloadProblems("{\"k\":\"$TOKEN\"}", TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of()));
        assertDoesNotThrow(() -> AutomationRules.checkPayload("{\"k\":\"$TOKEN\"}", TriggerEvent.ADD_ARTIFACT_TAG,
                List.of("TOKEN"), Set.of()));
        assertDoesNotThrow(() -> AutomationRules.checkPayload("{\"k\":\"${SIGNING}\"}", TriggerEvent.ADD_ARTIFACT_TAG,
                List.of(), Set.of("SIGNING")), "the webhook's own secrets");
        assertEquals(
                List.of("ungranted_secret: Secrets used but not granted (add them to granted_secrets): "
                        + "ACCESS_TOKEN (the webhook has no access token)"),
                payloadProblems("{\"a\":\"${ACCESS_TOKEN}\"}", TriggerEvent.ADD_ARTIFACT_TAG, List.of("ACCESS_TOKEN"),
                        Set.of()));
        assertDoesNotThrow(() -> AutomationRules.checkPayload("{\"a\":\"${ACCESS_TOKEN}\"}",
                TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of("ACCESS_TOKEN")));
    }

    @Test
    void aPayloadIsJsonAndNoPayloadIsFine() {
        assertDoesNotThrow(
                () -> AutomationRules.checkPayload(null, TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of()));
        ApiException e = assertThrows(ApiException.class,
                () -> AutomationRules.checkPayload("{\"a\": ", TriggerEvent.ADD_ARTIFACT_TAG, List.of(), Set.of()));
        assertEquals(ApiException.Kind.INVALID, e.kind());
        assertEquals("payload_json", e.violations().get(0).type());
    }
}

package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.google.re2j.Pattern;

import dev.fulcrum.platform.json.RegularExpressions;

/** An automation's regexes: compiled once and shared, and a stored one over the limits matching nothing. */
class AutomationConditionTest {

    @Test
    void compiledPatternsAreKeptAndShared() {
        String regex = "^kept-" + System.nanoTime() + "$";
        AutomationCondition first = AutomationCondition.of(regex, null, null, null, null, List.of());
        AutomationCondition second = AutomationCondition.of(regex, null, null, null, null, List.of());
        assertTrue(RegularExpressions.cached(regex));
        assertSame(first.alias(), second.alias());
        Pattern pattern = RegularExpressions.pattern(regex);
        assertSame(pattern, first.alias());
    }

    @Test
    void aStoredRegexOverTheLimitsMatchesNothing() {
        AutomationCondition old = AutomationCondition.of("(abcdef){1000}", null, "x".repeat(2000), null, null,
                List.of());
        assertFalse(old.aliasMatches("abcdef"));
        assertFalse(old.aliasMatches(""));
        assertFalse(old.runMatches(null, "x".repeat(2000)));
        assertFalse(RegularExpressions.cached("(abcdef){1000}"));
    }
}

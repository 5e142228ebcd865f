package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.google.re2j.Pattern;

/** Regex limits and the kept compiled patterns, without the server. */
class AutomationConditionTest {

    @Test
    void usualRegexesPass() {
        for (String regex : new String[] { "^prod$", "^(prod|staging)-v\\d+$", "[\\p{L}\\p{N}]{1,100}", "\\Q{1000}\\E",
                "x{2,1000}", "[{}]{10}", "(?i)^release-(\\d{1,4})\\.(\\d{1,4})$", "a".repeat(1024) }) {
            assertNull(AutomationCondition.problem(regex), regex);
        }
    }

    @Test
    void tooLongTooLargeOrInvalidIsSaid() {
        assertEquals("Must be at most 1024 characters", AutomationCondition.problem("a".repeat(1025)));
        for (String regex : new String[] { "((a{1000}){1000}){1000}", "(a{1000}){1000}", "(abcdef){1000}",
                "[a-z]{1000}[0-9]{1000}[a-f]{1000}[x-z]{1000}[1-2]{1000}[3-4]{1000}" }) {
            assertTrue(AutomationCondition.problem(regex).contains("5000 RE2 instructions"), regex);
        }
        assertTrue(AutomationCondition.problem("(unclosed").startsWith("Not a valid RE2 regular expression"));
    }

    @Test
    void theEstimateCountsNestedRepetitionsWithoutCompiling() {
        assertEquals(1_000_000_000L, RegexSize.estimate("((a{1000}){1000}){1000}"), 1_002_003L);
        assertTrue(RegexSize.estimate("\\p{Greek}{3}") <= 3 + 1);
        assertEquals(3, RegexSize.estimate("abc"));
        assertTrue(RegexSize.estimate("[{]{5}") >= 5);
        assertTrue(RegexSize.estimate("9".repeat(40) + "{99999999999999999999}") > 0, "saturates");
    }

    @Test
    void compiledPatternsAreKeptAndShared() {
        String regex = "^kept-" + System.nanoTime() + "$";
        AutomationCondition first = AutomationCondition.of(regex, null, null, null, null, List.of());
        AutomationCondition second = AutomationCondition.of(regex, null, null, null, null, List.of());
        assertTrue(AutomationCondition.cached(regex));
        assertSame(first.alias(), second.alias());
        Pattern pattern = AutomationCondition.pattern(regex);
        assertSame(pattern, first.alias());
    }

    @Test
    void aStoredRegexOverTheLimitsMatchesNothing() {
        AutomationCondition old = AutomationCondition.of("(abcdef){1000}", null, "x".repeat(2000), null, null,
                List.of());
        assertFalse(old.aliasMatches("abcdef"));
        assertFalse(old.aliasMatches(""));
        assertFalse(old.runMatches(null, "x".repeat(2000)));
        assertFalse(AutomationCondition.cached("(abcdef){1000}"));
    }
}

package dev.fulcrum.platform.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.errors.ApiException;

/** The one rule for a user's regex, without the server: the limits and the estimate that guards the compile. */
class RegularExpressionsTest {

    @Test
    void usualRegexesPass() {
        for (String regex : new String[] { "^prod$", "^(prod|staging)-v\\d+$", "[\\p{L}\\p{N}]{1,100}", "\\Q{1000}\\E",
                "x{2,1000}", "[{}]{10}", "(?i)^release-(\\d{1,4})\\.(\\d{1,4})$", "a".repeat(1024) }) {
            assertNull(RegularExpressions.problem(regex), regex);
        }
    }

    @Test
    void tooLongTooLargeOrInvalidIsSaid() {
        assertEquals("Must be at most 1024 characters", RegularExpressions.problem("a".repeat(1025)));
        for (String regex : new String[] { "((a{1000}){1000}){1000}", "(a{1000}){1000}", "(abcdef){1000}",
                "[a-z]{1000}[0-9]{1000}[a-f]{1000}[x-z]{1000}[1-2]{1000}[3-4]{1000}" }) {
            assertTrue(RegularExpressions.problem(regex).contains("5000 RE2 instructions"), regex);
        }
        assertTrue(RegularExpressions.problem("(unclosed").startsWith("Not a valid RE2 regular expression"));
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
    void aRefusedRegexIsA422AtItsField() {
        ApiException refused = org.junit.jupiter.api.Assertions.assertThrows(ApiException.class,
                () -> RegularExpressions.compile("((a{1000}){1000}){1000}", "query", "name"));
        assertEquals(ApiException.Kind.INVALID, refused.kind());
        assertEquals("regex", refused.violations().get(0).type());
        assertEquals(java.util.List.of("query", "name"), refused.violations().get(0).loc());
        assertTrue(RegularExpressions.compile("^train-", "query", "name").matcher("train-1").find());
    }
}

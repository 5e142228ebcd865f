package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Secret values in what an endpoint answered become {@code [secret NAME]}, in every form an echo may carry them. */
class SecretMaskTest {

    @Test
    void valuesAreReplacedAsSentAndJsonEscaped() {
        SecretMask mask = SecretMask.of(Map.of("PASSWORD", "p\"w/é\\n", "TOKEN", "t0ken"));
        assertEquals("a [secret PASSWORD] b [secret TOKEN]", mask.apply("a p\"w/é\\n b t0ken", false));
        assertEquals("{\"x\":\"[secret PASSWORD]\"}", mask.apply("{\"x\":\"p\\\"w/é\\\\n\"}", false), "Jackson");
        assertEquals("{\"x\":\"[secret PASSWORD]\"}", mask.apply("{\"x\":\"p\\\"w\\/é\\\\n\"}", false), "PHP");
        assertEquals("{\"x\":\"[secret PASSWORD]\"}", mask.apply("{\"x\":\"p\\\"w/\\u00e9\\\\n\"}", false), "Python");
        assertEquals("[secret TOKEN][secret TOKEN]", mask.apply("t0kent0ken", false));
    }

    @Test
    void aReplacementIsNotSearchedAgainAndTheLongerValueWins() {
        SecretMask mask = SecretMask.of(Map.of("A", "secret", "B", "secret-longer"));
        assertEquals("[secret B] [secret A]", mask.apply("secret-longer secret", false));
    }

    @Test
    void theTokenIsNamedByItsSecretNotByAccessToken() {
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("ACCESS_TOKEN", "tok");
        secrets.put("GH_TOKEN", "tok");
        assertEquals("Bearer [secret GH_TOKEN]", SecretMask.of(secrets).apply("Bearer tok", false));
    }

    @Test
    void aValueCutOffAtTheEndOfATruncatedBodyIsReplacedToo() {
        SecretMask mask = SecretMask.of(Map.of("KEY", "abcdefghij"));
        assertEquals("echo: [secret KEY]", mask.apply("echo: abcdef", true));
        assertEquals("echo: abcdef", mask.apply("echo: abcdef", false), "only a truncated body ends mid-value");
        assertEquals("echo: abc", mask.apply("echo: abc", true), "too short a piece to say");
        assertEquals("[secret KEY] and [secret KEY]", mask.apply("abcdefghij and abcdefg", true));
    }

    @Test
    void headersAndNothing() {
        SecretMask mask = SecretMask.of(Map.of("TOKEN", "t0ken"));
        assertEquals(Map.of("x-echo", "Bearer [secret TOKEN]", "other", "plain"),
                mask.apply(Map.of("x-echo", "Bearer t0ken", "other", "plain")));
        assertNull(mask.apply(null, true));
        assertSame(SecretMask.NONE, SecretMask.of(Map.of()));
        assertEquals("t0ken", SecretMask.NONE.apply("t0ken", true));
    }
}

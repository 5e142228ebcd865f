package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/** A generation's text from its tokens' bytes: whole characters only, cut before a stop string, never sent early. */
class TokenTextTest {

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aCharacterSplitOverTokensComesWhole() {
        TokenText text = new TokenText(List.of());
        byte[] euro = bytes("€"); // three bytes
        assertEquals("", text.add(new byte[] { euro[0] }));
        assertEquals("", text.add(new byte[] { euro[1] }));
        assertEquals("€ ok", text.add(new byte[] { euro[2], ' ', 'o', 'k' }));
        assertEquals("€ ok", text.text());
    }

    @Test
    void textThatMayStartAStopStringIsHeldBackThenCut() {
        TokenText text = new TokenText(List.of("\nUser:", "END"));
        assertEquals("Hello", text.add(bytes("Hello")));
        assertEquals("", text.add(bytes("\nUs")));
        assertFalse(text.stopped());
        assertEquals("", text.add(bytes("er: more")));
        assertTrue(text.stopped());
        assertEquals("", text.finish());
        assertEquals("Hello", text.text());
    }

    @Test
    void aHeldPrefixThatIsNoStopStringIsReleased() {
        TokenText text = new TokenText(List.of("END"));
        assertEquals("the ", text.add(bytes("the EN")));
        assertEquals("ENtry", text.add(bytes("try")));
        assertEquals("", text.add(bytes("E")));
        assertEquals("E", text.finish());
        assertEquals("the ENtryE", text.text());
    }

    @Test
    void theEarliestStopStringWins() {
        TokenText text = new TokenText(List.of("b", "a"));
        assertEquals("x", text.add(bytes("xab")));
        assertTrue(text.stopped());
    }
}

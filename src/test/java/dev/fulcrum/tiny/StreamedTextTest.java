package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Byte-by-byte decoding, stop strings and the pieces handed to the listener. */
class StreamedTextTest {

    private final List<String> pieces = new ArrayList<>();

    private StreamedText streamed(List<String> stops) {
        return new StreamedText(stops, piece -> {
            pieces.add(piece);
            return true;
        });
    }

    private static boolean feed(StreamedText text, String s) {
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            if (!text.accept(b & 0xFF)) {
                return false;
            }
        }
        return true;
    }

    @Test
    void multiByteCharactersAreNeverSplit() {
        String input = "héllo 😀 wörld ✓ 𝄞";
        StreamedText text = streamed(List.of());
        assertTrue(feed(text, input));
        assertEquals(input, text.finish());
        assertEquals(input, String.join("", pieces));
        for (String piece : pieces) {
            BuiltinModelTest.assertWholeCodePoints(piece);
        }
        // one piece per code point: nothing is held back without stop strings
        assertEquals(input.codePointCount(0, input.length()), pieces.size());
    }

    @Test
    void malformedBytesBecomeReplacementCharacters() {
        StreamedText text = streamed(List.of());
        for (int b : new int[] { 'a', 0xFF, 'b', 0xC3, 'c', 0xE0, 0x80, 'd', 0xF0, 0x9F, 0x98 }) {
            text.accept(b);
        }
        assertEquals("a\uFFFDb\uFFFDc\uFFFD\uFFFDd\uFFFD", text.finish());
        assertEquals(text.finish(), String.join("", pieces));
    }

    @Test
    void aStopStringEndsTheTextAndItsBeginningIsHeldBack() {
        StreamedText text = streamed(List.of("STOP", "😀!"));
        assertTrue(feed(text, "abc ST"));
        assertEquals("abc ", String.join("", pieces));
        assertTrue(feed(text, "AY S"));
        assertEquals("abc STAY ", String.join("", pieces));
        assertFalse(feed(text, "TOP and more"));
        assertTrue(text.stopMatched());
        assertEquals("abc STAY ", text.finish());
        assertEquals("abc STAY ", String.join("", pieces));
    }

    @Test
    void multiByteStopStrings() {
        StreamedText text = streamed(List.of("😀!"));
        assertTrue(feed(text, "hé 😀"));
        assertEquals("hé ", String.join("", pieces));
        assertFalse(feed(text, "!x"));
        assertEquals("hé ", text.finish());
    }

    @Test
    void heldBackTextIsReleasedAtTheEnd() {
        StreamedText text = streamed(List.of("STOP"));
        assertTrue(feed(text, "xSTO"));
        assertEquals("x", String.join("", pieces));
        assertEquals("xSTO", text.finish());
        assertEquals("xSTO", String.join("", pieces));
    }

    @Test
    void theEarliestOfSeveralStopStringsWins() {
        StreamedText text = streamed(List.of("cd", "bcde"));
        assertFalse(feed(text, "abcdef"));
        assertEquals("ab", text.finish());
    }

    @Test
    void cancellingStopsTheStream() {
        List<String> seen = new ArrayList<>();
        StreamedText text = new StreamedText(null, piece -> {
            seen.add(piece);
            return false;
        });
        assertFalse(text.accept('a'));
        assertFalse(text.accept('b'));
        assertEquals(List.of("a"), seen);
        assertEquals("a", text.finish());
    }
}

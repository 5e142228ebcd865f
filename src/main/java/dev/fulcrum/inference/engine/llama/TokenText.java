package dev.fulcrum.inference.engine.llama;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The text of a generation as its tokens come: bytes gathered until they make whole UTF-8 characters (a token may hold
 * part of one), and cut before the first stop string. Text that could still be the start of a stop string is held back
 * until the next token tells, so a stream never sends what a stop string later removes.
 */
public final class TokenText {

    private final List<String> stops;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    /** Decoded text not yet given out (it may be the start of a stop string). */
    private final StringBuilder held = new StringBuilder();
    private final StringBuilder given = new StringBuilder();
    private boolean stopped;

    public TokenText(List<String> stops) {
        this.stops = stops.stream().filter(s -> !s.isEmpty()).toList();
    }

    /**
     * Adds a token's bytes; answers the text that can be given out now (possibly empty). After a stop string was found,
     * {@link #stopped()} is true and nothing more is given.
     */
    public String add(byte[] piece) {
        if (stopped) {
            return "";
        }
        pending.write(piece, 0, piece.length);
        byte[] bytes = pending.toByteArray();
        int whole = wholeCharacters(bytes);
        if (whole == 0) {
            return "";
        }
        held.append(new String(bytes, 0, whole, StandardCharsets.UTF_8));
        pending.reset();
        pending.write(bytes, whole, bytes.length - whole);
        return release(false);
    }

    /** The rest at the end of the generation (bytes of an unfinished character are dropped). */
    public String finish() {
        if (stopped) {
            return "";
        }
        return release(true);
    }

    public boolean stopped() {
        return stopped;
    }

    /** Everything given out so far. */
    public String text() {
        return given.toString();
    }

    private String release(boolean end) {
        int cut = -1;
        for (String stop : stops) {
            int at = held.indexOf(stop);
            if (at >= 0 && (cut < 0 || at < cut)) {
                cut = at;
            }
        }
        int out;
        if (cut >= 0) {
            stopped = true;
            out = cut;
        } else if (end) {
            out = held.length();
        } else {
            out = held.length() - longestStopPrefixAtEnd();
        }
        String text = held.substring(0, out);
        held.delete(0, stopped ? held.length() : out);
        given.append(text);
        return text;
    }

    /** The length of the longest end of the held text that is the start of a stop string. */
    private int longestStopPrefixAtEnd() {
        int longest = 0;
        for (String stop : stops) {
            for (int n = Math.min(stop.length() - 1, held.length()); n > longest; n--) {
                if (held.substring(held.length() - n).equals(stop.substring(0, n))) {
                    longest = n;
                    break;
                }
            }
        }
        return longest;
    }

    /** How many leading bytes form whole UTF-8 characters (an invalid byte counts as whole: it decodes to U+FFFD). */
    static int wholeCharacters(byte[] bytes) {
        int i = 0;
        while (i < bytes.length) {
            int b = bytes[i] & 0xff;
            int length = b < 0x80 ? 1 : b >= 0xf0 && b < 0xf8 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
            if (b >= 0xf8) {
                length = 1;
            }
            if (i + length > bytes.length) {
                return i;
            }
            i += length;
        }
        return i;
    }
}

package dev.fulcrum.tiny;

import java.util.List;

/**
 * A generated token's log-probability under the model, with the most likely tokens at that position (empty unless asked
 * for), as the OpenAI API reports them.
 *
 * @param token
 *            the token: a byte of UTF-8 (0 to 255) or the end-of-turn token
 * @param logprob
 *            the natural logarithm of its probability
 * @param top
 *            the most likely tokens at its position, most likely first, each without alternatives of its own
 */
public record TokenLogprob(int token, double logprob, List<TokenLogprob> top) {

    /** The end-of-turn token as a text, the way chat templates write it. */
    public static final String END_TEXT = "<|end|>";

    /**
     * The token as text: its byte when that is ASCII, U+FFFD for a byte that is only part of a character (its
     * {@link #bytes} are exact), {@value #END_TEXT} for the end of the turn.
     */
    public String text() {
        if (token == ChatTemplate.END) {
            return END_TEXT;
        }
        return token < 0x80 ? String.valueOf((char) token) : "\uFFFD";
    }

    /** The token's bytes of UTF-8; null for the end-of-turn token, which is no text. */
    public List<Integer> bytes() {
        return token < 256 ? List.of(token) : null;
    }
}

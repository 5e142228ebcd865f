package dev.fulcrum.inference.engine;

import java.util.List;

/**
 * A generated token as {@code logprobs} report it: its bytes (UTF-8, possibly part of a character), the natural
 * logarithm of its probability, and the most likely tokens at its place (most likely first, empty unless asked).
 */
public record LoggedToken(byte[] bytes, double logprob, List<LoggedToken> top) {
}

package dev.fulcrum.tiny;

import java.util.List;

/**
 * How to pick tokens.
 *
 * @param temperature
 *            0 picks the most likely token (greedy); higher values flatten the distribution
 * @param topP
 *            nucleus sampling: keep the smallest set of tokens whose probabilities add up to at least this (1 = all)
 * @param maxTokens
 *            the most tokens to generate; 0 or less means as many as the context length
 * @param stop
 *            strings that end the generation when they appear in the text (not included in the text); may be null
 * @param seed
 *            the same seed, model and conversation give the same text; null draws a random seed
 */
public record Sampling(double temperature, double topP, int maxTokens, List<String> stop, Long seed) {

    /** Greedy decoding with a token limit and no stop strings. */
    public static Sampling greedy(int maxTokens) {
        return new Sampling(0, 1, maxTokens, List.of(), 0L);
    }
}

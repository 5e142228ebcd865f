package dev.fulcrum.tiny;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects the log-probabilities of the tokens a generation produces ({@code logprobs}), with the {@code top} most
 * likely tokens at each position ({@code top_logprobs}). The probabilities are the model's own: the softmax of its
 * logits at temperature 1 over the tokens it may emit (bytes and the end of the turn), before temperature and top_p
 * shape the sampling, as vLLM reports them by default. The end-of-turn token that ends a generation is not listed.
 */
public final class Logprobs {

    /** The most alternatives a position may list (OpenAI's limit for {@code top_logprobs}). */
    public static final int MAX_TOP = 20;

    private final int top;
    private final List<TokenLogprob> tokens = new ArrayList<>();
    private int taken;

    /**
     * @param top
     *            how many of the most likely tokens to list at each position, 0 to {@value #MAX_TOP}
     */
    public Logprobs(int top) {
        if (top < 0 || top > MAX_TOP) {
            throw new IllegalArgumentException("top must be 0 to " + MAX_TOP);
        }
        this.top = top;
    }

    /** Records the token chosen from these logits. */
    void record(float[] logits, int chosen) {
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < logits.length; j++) {
            if (TokenSampler.allowed(j)) {
                max = Math.max(max, logits[j]);
            }
        }
        double total = 0;
        for (int j = 0; j < logits.length; j++) {
            if (TokenSampler.allowed(j)) {
                total += Math.exp(logits[j] - max);
            }
        }
        double normalizer = max + Math.log(total);
        List<TokenLogprob> best = new ArrayList<>(top);
        if (top > 0) {
            boolean[] listed = new boolean[logits.length];
            for (int k = 0; k < top; k++) {
                int pick = -1;
                for (int j = 0; j < logits.length; j++) {
                    if (TokenSampler.allowed(j) && !listed[j] && (pick < 0 || logits[j] > logits[pick])) {
                        pick = j;
                    }
                }
                if (pick < 0) {
                    break;
                }
                listed[pick] = true;
                best.add(new TokenLogprob(pick, logits[pick] - normalizer, List.of()));
            }
        }
        tokens.add(new TokenLogprob(chosen, logits[chosen] - normalizer, List.copyOf(best)));
    }

    /**
     * Keeps only the tokens whose bytes fall within the first {@code bytes} of the answer (a stop string cut it): every
     * token of an answer is one byte.
     */
    void keepBytes(int bytes) {
        int kept = Math.min(tokens.size(), bytes);
        tokens.subList(kept, tokens.size()).clear();
        taken = Math.min(taken, kept);
    }

    /** Every token recorded. */
    public List<TokenLogprob> all() {
        return List.copyOf(tokens);
    }

    /** The tokens recorded since the last call (for a streamed answer: those of the piece just decoded). */
    public List<TokenLogprob> takeNew() {
        List<TokenLogprob> fresh = List.copyOf(tokens.subList(taken, tokens.size()));
        taken = tokens.size();
        return fresh;
    }
}

package dev.fulcrum.tiny;

import java.util.Arrays;
import java.util.Random;

/**
 * Picks the next token from logits: greedy at temperature 0, else softmax at the temperature restricted to the nucleus
 * of top-p probability mass. Role headers are never picked; the end-of-turn token is.
 */
final class TokenSampler {

    private final int vocab;
    private final double temperature;
    private final double topP;
    private final double[] probs;
    private final long[] order;

    TokenSampler(int vocab, double temperature, double topP) {
        this.vocab = vocab;
        this.temperature = temperature;
        this.topP = topP;
        this.probs = new double[vocab];
        this.order = new long[vocab];
    }

    static boolean allowed(int token) {
        return token < ChatTemplate.SYSTEM || token == ChatTemplate.END;
    }

    int sample(float[] logits, Random random) {
        int best = -1;
        for (int j = 0; j < vocab; j++) {
            if (allowed(j) && (best < 0 || logits[j] > logits[best])) {
                best = j;
            }
        }
        if (!(temperature > 0)) {
            return best;
        }
        double max = logits[best];
        double total = 0;
        for (int j = 0; j < vocab; j++) {
            double e = allowed(j) ? Math.exp((logits[j] - max) / temperature) : 0;
            probs[j] = e;
            total += e;
        }
        if (topP < 1) {
            for (int j = 0; j < vocab; j++) {
                order[j] = ((long) Float.floatToIntBits((float) (probs[j] / total)) << 32) | j;
            }
            Arrays.sort(order);
            double kept = 0;
            int cut = vocab - 1;
            while (cut >= 0) {
                kept += probs[(int) order[cut]];
                cut--;
                if (kept >= topP * total) {
                    break;
                }
            }
            for (int i = 0; i <= cut; i++) {
                probs[(int) order[i]] = 0;
            }
            total = kept;
        }
        double u = random.nextDouble() * total;
        int last = best;
        for (int j = 0; j < vocab; j++) {
            if (probs[j] > 0) {
                last = j;
                u -= probs[j];
                if (u < 0) {
                    return j;
                }
            }
        }
        return last;
    }
}

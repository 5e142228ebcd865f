package dev.fulcrum.inference.engine.llama;

/**
 * Log probabilities of a token from its row of logits: a log-softmax over the whole vocabulary (the model's own
 * distribution, before any sampler, temperature or grammar), as llama-server reports them without
 * {@code post_sampling_probs}.
 */
final class TokenLogprobs {

    private TokenLogprobs() {
    }

    /** The chosen token's log probability and the {@code top} most likely tokens', highest first. */
    static Generation.Token of(int token, byte[] piece, float[] logits, int top) {
        return of(token, piece, logits, top, norm(logits));
    }

    /** The log of the softmax's denominator: any token's log probability is its logit minus this. */
    static float norm(float[] logits) {
        float max = Float.NEGATIVE_INFINITY;
        for (float logit : logits) {
            if (logit > max) {
                max = logit;
            }
        }
        double sum = 0;
        for (float logit : logits) {
            sum += Math.exp(logit - max);
        }
        return (float) (max + Math.log(sum));
    }

    /** As {@link #of(int, byte[], float[], int)}, with the row's {@link #norm} given. */
    static Generation.Token of(int token, byte[] piece, float[] logits, int top, float norm) {
        int[] ids = new int[top];
        float[] values = new float[top];
        int filled = 0;
        for (int i = 0; i < logits.length; i++) {
            float logit = logits[i];
            if (filled == top && (top == 0 || logit <= values[top - 1])) {
                continue;
            }
            int at = filled < top ? filled++ : top - 1;
            while (at > 0 && values[at - 1] < logit) {
                values[at] = values[at - 1];
                ids[at] = ids[at - 1];
                at--;
            }
            values[at] = logit;
            ids[at] = i;
        }
        for (int i = 0; i < filled; i++) {
            values[i] -= norm;
        }
        return new Generation.Token(token, piece, logits[token] - norm, ids, values);
    }
}

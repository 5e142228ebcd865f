package dev.fulcrum.tiny;

import java.util.Arrays;

/** Token-by-token forward pass with a key/value cache: the per-generation state over read-only weights. */
final class Decoder {

    private final ModelShape s;
    private final float[] p;
    private final int d;
    private final int f;
    private final int hs;
    private final float scale;
    private final float[][] keys;
    private final float[][] values;
    private final float[] x;
    private final float[] n;
    private final float[] q;
    private final float[] mix;
    private final float[] tmp;
    private final float[] up;
    private final float[] scores;
    private final float[] logits;
    private int position;

    Decoder(ModelShape shape, float[] params) {
        s = shape;
        p = params;
        d = shape.width;
        f = shape.hidden;
        hs = shape.headSize();
        scale = (float) (1.0 / Math.sqrt(hs));
        keys = new float[shape.layers][shape.context * d];
        values = new float[shape.layers][shape.context * d];
        x = new float[d];
        n = new float[d];
        q = new float[d];
        mix = new float[d];
        tmp = new float[d];
        up = new float[f];
        scores = new float[shape.context];
        logits = new float[shape.vocab];
    }

    int position() {
        return position;
    }

    void reset() {
        position = 0;
    }

    /**
     * Feeds one token at the next position; returns the logits for the token after it (a shared array, valid until the
     * next call) when wanted, else null.
     */
    float[] step(int token, boolean wantLogits) {
        if (position >= s.context) {
            throw new IllegalStateException("context full");
        }
        int t = position;
        int te = s.tokenEmbedding + token * d;
        int pe = s.positionEmbedding + t * d;
        for (int i = 0; i < d; i++) {
            x[i] = p[te + i] + p[pe + i];
        }
        for (int l = 0; l < s.layers; l++) {
            Kernels.norm(x, 0, 1, d, p, s.norm1Gain[l], s.norm1Bias[l], n, 0, null, null, 0);
            Kernels.matmul(n, 0, 1, d, p, s.query[l], d, q, 0);
            Kernels.matmul(n, 0, 1, d, p, s.key[l], d, keys[l], t * d);
            Kernels.matmul(n, 0, 1, d, p, s.value[l], d, values[l], t * d);
            float[] kl = keys[l];
            float[] vl = values[l];
            Arrays.fill(mix, 0f);
            for (int h = 0; h < s.heads; h++) {
                int ho = h * hs;
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j <= t; j++) {
                    float score = Kernels.dot(q, ho, kl, j * d + ho, hs) * scale;
                    scores[j] = score;
                    if (score > max) {
                        max = score;
                    }
                }
                float sum = 0f;
                for (int j = 0; j <= t; j++) {
                    float e = (float) Math.exp(scores[j] - max);
                    scores[j] = e;
                    sum += e;
                }
                float inv = 1f / sum;
                for (int j = 0; j <= t; j++) {
                    Kernels.axpy(scores[j] * inv, vl, j * d + ho, mix, ho, hs);
                }
            }
            Kernels.matmul(mix, 0, 1, d, p, s.attentionOut[l], d, tmp, 0);
            for (int i = 0; i < d; i++) {
                x[i] += tmp[i];
            }
            Kernels.norm(x, 0, 1, d, p, s.norm2Gain[l], s.norm2Bias[l], n, 0, null, null, 0);
            Kernels.matmul(n, 0, 1, d, p, s.up[l], f, up, 0);
            for (int i = 0; i < f; i++) {
                up[i] = Kernels.gelu(up[i] + p[s.upBias[l] + i]);
            }
            Kernels.matmul(up, 0, 1, f, p, s.down[l], d, tmp, 0);
            for (int i = 0; i < d; i++) {
                x[i] += tmp[i] + p[s.downBias[l] + i];
            }
        }
        position++;
        if (!wantLogits) {
            return null;
        }
        Kernels.norm(x, 0, 1, d, p, s.finalGain, s.finalBias, n, 0, null, null, 0);
        Kernels.matmul(n, 0, 1, d, p, s.head, s.vocab, logits, 0);
        for (int j = 0; j < s.vocab; j++) {
            logits[j] += p[s.headBias + j];
        }
        return logits;
    }
}

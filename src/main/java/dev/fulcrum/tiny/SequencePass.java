package dev.fulcrum.tiny;

import java.util.Arrays;

/**
 * Forward and backward pass of the transformer over one whole token sequence, keeping every activation the backward
 * pass needs. One instance is a reusable workspace for one thread.
 */
final class SequencePass {

    private final ModelShape s;
    private final float[] p;
    private final int c;
    private final int d;
    private final int f;
    private final int heads;
    private final int hs;
    private final int vocab;
    private final int layers;
    private final float scale;

    private int length;
    private final int[] input;
    private final float[][] residual;
    private final float[][] norm1;
    private final float[][] norm1Mean;
    private final float[][] norm1Rstd;
    private final float[][] q;
    private final float[][] k;
    private final float[][] v;
    private final float[][] attention;
    private final float[][] mixed;
    private final float[][] mid;
    private final float[][] norm2;
    private final float[][] norm2Mean;
    private final float[][] norm2Rstd;
    private final float[][] upPre;
    private final float[][] upAct;
    private final float[] finalNorm;
    private final float[] finalMean;
    private final float[] finalRstd;
    private final float[] probs;
    private final boolean[] scored;

    private final float[] dx;
    private final float[] dNorm;
    private final float[] dMixed;
    private final float[] dq;
    private final float[] dk;
    private final float[] dv;
    private final float[] dUp;
    private final float[] dRow;
    private final float[] dLogits;

    SequencePass(ModelShape shape, float[] params) {
        s = shape;
        p = params;
        c = shape.context;
        d = shape.width;
        f = shape.hidden;
        heads = shape.heads;
        hs = shape.headSize();
        vocab = shape.vocab;
        layers = shape.layers;
        scale = (float) (1.0 / Math.sqrt(hs));
        input = new int[c];
        residual = new float[layers + 1][c * d];
        norm1 = new float[layers][c * d];
        norm1Mean = new float[layers][c];
        norm1Rstd = new float[layers][c];
        q = new float[layers][c * d];
        k = new float[layers][c * d];
        v = new float[layers][c * d];
        attention = new float[layers][heads * c * c];
        mixed = new float[layers][c * d];
        mid = new float[layers][c * d];
        norm2 = new float[layers][c * d];
        norm2Mean = new float[layers][c];
        norm2Rstd = new float[layers][c];
        upPre = new float[layers][c * f];
        upAct = new float[layers][c * f];
        finalNorm = new float[c * d];
        finalMean = new float[c];
        finalRstd = new float[c];
        probs = new float[c * vocab];
        scored = new boolean[c];
        dx = new float[c * d];
        dNorm = new float[c * d];
        dMixed = new float[c * d];
        dq = new float[c * d];
        dk = new float[c * d];
        dv = new float[c * d];
        dUp = new float[c * f];
        dRow = new float[c];
        dLogits = new float[vocab];
    }

    int length() {
        return length;
    }

    /** Runs the network over tokens[from, from + count) (count at most the context length) up to the final norm. */
    void forward(int[] tokens, int from, int count) {
        if (count < 1 || count > c) {
            throw new IllegalArgumentException("sequence length out of range");
        }
        length = count;
        System.arraycopy(tokens, from, input, 0, count);
        Arrays.fill(scored, false);
        float[] x = residual[0];
        for (int t = 0; t < count; t++) {
            int te = s.tokenEmbedding + input[t] * d;
            int pe = s.positionEmbedding + t * d;
            for (int i = 0; i < d; i++) {
                x[t * d + i] = p[te + i] + p[pe + i];
            }
        }
        for (int l = 0; l < layers; l++) {
            layerForward(l, count);
        }
        Kernels.norm(residual[layers], 0, count, d, p, s.finalGain, s.finalBias, finalNorm, 0, finalMean, finalRstd, 0);
    }

    private void layerForward(int l, int count) {
        float[] x = residual[l];
        Kernels.norm(x, 0, count, d, p, s.norm1Gain[l], s.norm1Bias[l], norm1[l], 0, norm1Mean[l], norm1Rstd[l], 0);
        Kernels.matmul(norm1[l], 0, count, d, p, s.query[l], d, q[l], 0);
        Kernels.matmul(norm1[l], 0, count, d, p, s.key[l], d, k[l], 0);
        Kernels.matmul(norm1[l], 0, count, d, p, s.value[l], d, v[l], 0);
        float[] ql = q[l];
        float[] kl = k[l];
        float[] vl = v[l];
        float[] att = attention[l];
        float[] mix = mixed[l];
        Arrays.fill(mix, 0, count * d, 0f);
        for (int h = 0; h < heads; h++) {
            int ho = h * hs;
            for (int t = 0; t < count; t++) {
                int row = (h * c + t) * c;
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j <= t; j++) {
                    float score = Kernels.dot(ql, t * d + ho, kl, j * d + ho, hs) * scale;
                    att[row + j] = score;
                    if (score > max) {
                        max = score;
                    }
                }
                float sum = 0f;
                for (int j = 0; j <= t; j++) {
                    float e = (float) Math.exp(att[row + j] - max);
                    att[row + j] = e;
                    sum += e;
                }
                float inv = 1f / sum;
                for (int j = 0; j <= t; j++) {
                    float a = att[row + j] * inv;
                    att[row + j] = a;
                    Kernels.axpy(a, vl, j * d + ho, mix, t * d + ho, hs);
                }
            }
        }
        float[] m = mid[l];
        Kernels.matmul(mix, 0, count, d, p, s.attentionOut[l], d, m, 0);
        for (int i = 0; i < count * d; i++) {
            m[i] += x[i];
        }
        Kernels.norm(m, 0, count, d, p, s.norm2Gain[l], s.norm2Bias[l], norm2[l], 0, norm2Mean[l], norm2Rstd[l], 0);
        float[] pre = upPre[l];
        float[] act = upAct[l];
        Kernels.matmul(norm2[l], 0, count, d, p, s.up[l], f, pre, 0);
        Kernels.addBias(pre, 0, count, f, p, s.upBias[l]);
        for (int i = 0; i < count * f; i++) {
            act[i] = Kernels.gelu(pre[i]);
        }
        float[] out = residual[l + 1];
        Kernels.matmul(act, 0, count, f, p, s.down[l], d, out, 0);
        Kernels.addBias(out, 0, count, d, p, s.downBias[l]);
        for (int i = 0; i < count * d; i++) {
            out[i] += m[i];
        }
    }

    /** The log-probability of target as the token after position t; keeps the distribution for the backward pass. */
    double logProb(int t, int target) {
        int po = t * vocab;
        Kernels.matmul(finalNorm, t * d, 1, d, p, s.head, vocab, probs, po);
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < vocab; j++) {
            float z = probs[po + j] + p[s.headBias + j];
            probs[po + j] = z;
            if (z > max) {
                max = z;
            }
        }
        double sum = 0;
        for (int j = 0; j < vocab; j++) {
            sum += Math.exp(probs[po + j] - max);
        }
        double logSum = max + Math.log(sum);
        double result = probs[po + target] - logSum;
        for (int j = 0; j < vocab; j++) {
            probs[po + j] = (float) Math.exp(probs[po + j] - logSum);
        }
        scored[t] = true;
        return result;
    }

    /**
     * Adds to grads the gradient of sum_t coefficient[t] * logProb(t, targets[t]) with respect to the parameters. Only
     * positions scored by {@link #logProb} since the last forward pass may have a non-zero coefficient.
     */
    void backward(int[] targets, float[] coefficient, float[] grads) {
        int count = length;
        Arrays.fill(dNorm, 0, count * d, 0f);
        for (int t = 0; t < count; t++) {
            float g = coefficient[t];
            if (g == 0f) {
                continue;
            }
            if (!scored[t]) {
                throw new IllegalStateException("position " + t + " was not scored");
            }
            int po = t * vocab;
            for (int j = 0; j < vocab; j++) {
                dLogits[j] = -g * probs[po + j];
            }
            dLogits[targets[t]] += g;
            Kernels.matmulBackward(finalNorm, t * d, 1, d, p, s.head, vocab, dLogits, 0, grads, dNorm, t * d, false);
            for (int j = 0; j < vocab; j++) {
                grads[s.headBias + j] += dLogits[j];
            }
        }
        Arrays.fill(dx, 0, count * d, 0f);
        Kernels.normBackward(residual[layers], 0, count, d, p, s.finalGain, s.finalBias, finalMean, finalRstd, dNorm, 0,
                grads, dx, 0);
        for (int l = layers - 1; l >= 0; l--) {
            layerBackward(l, count, grads);
        }
        for (int t = 0; t < count; t++) {
            int te = s.tokenEmbedding + input[t] * d;
            int pe = s.positionEmbedding + t * d;
            for (int i = 0; i < d; i++) {
                float g = dx[t * d + i];
                grads[te + i] += g;
                grads[pe + i] += g;
            }
        }
    }

    /** On entry dx holds the gradient at the layer's output; on exit the gradient at its input. */
    private void layerBackward(int l, int count, float[] grads) {
        // feed-forward block: out = mid + gelu(norm2 up + upBias) down + downBias
        Kernels.biasBackward(dx, 0, count, d, grads, s.downBias[l]);
        Kernels.matmulBackward(upAct[l], 0, count, f, p, s.down[l], d, dx, 0, grads, dUp, 0, false);
        float[] pre = upPre[l];
        for (int i = 0; i < count * f; i++) {
            dUp[i] *= Kernels.geluDerivative(pre[i]);
        }
        Kernels.biasBackward(dUp, 0, count, f, grads, s.upBias[l]);
        Kernels.matmulBackward(norm2[l], 0, count, d, p, s.up[l], f, dUp, 0, grads, dNorm, 0, false);
        // dx now also serves as d(mid)
        Kernels.normBackward(mid[l], 0, count, d, p, s.norm2Gain[l], s.norm2Bias[l], norm2Mean[l], norm2Rstd[l], dNorm,
                0, grads, dx, 0);
        // attention block: mid = x + mixed attentionOut
        Kernels.matmulBackward(mixed[l], 0, count, d, p, s.attentionOut[l], d, dx, 0, grads, dMixed, 0, false);
        Arrays.fill(dq, 0, count * d, 0f);
        Arrays.fill(dk, 0, count * d, 0f);
        Arrays.fill(dv, 0, count * d, 0f);
        float[] ql = q[l];
        float[] kl = k[l];
        float[] vl = v[l];
        float[] att = attention[l];
        for (int h = 0; h < heads; h++) {
            int ho = h * hs;
            for (int t = 0; t < count; t++) {
                int row = (h * c + t) * c;
                float dot = 0f;
                for (int j = 0; j <= t; j++) {
                    float dp = Kernels.dot(dMixed, t * d + ho, vl, j * d + ho, hs);
                    dRow[j] = dp;
                    dot += dp * att[row + j];
                    Kernels.axpy(att[row + j], dMixed, t * d + ho, dv, j * d + ho, hs);
                }
                for (int j = 0; j <= t; j++) {
                    float ds = att[row + j] * (dRow[j] - dot) * scale;
                    if (ds != 0f) {
                        Kernels.axpy(ds, kl, j * d + ho, dq, t * d + ho, hs);
                        Kernels.axpy(ds, ql, t * d + ho, dk, j * d + ho, hs);
                    }
                }
            }
        }
        Kernels.matmulBackward(norm1[l], 0, count, d, p, s.query[l], d, dq, 0, grads, dNorm, 0, false);
        Kernels.matmulBackward(norm1[l], 0, count, d, p, s.key[l], d, dk, 0, grads, dNorm, 0, true);
        Kernels.matmulBackward(norm1[l], 0, count, d, p, s.value[l], d, dv, 0, grads, dNorm, 0, true);
        Kernels.normBackward(residual[l], 0, count, d, p, s.norm1Gain[l], s.norm1Bias[l], norm1Mean[l], norm1Rstd[l],
                dNorm, 0, grads, dx, 0);
    }
}

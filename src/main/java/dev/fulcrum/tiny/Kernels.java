package dev.fulcrum.tiny;

import java.util.Arrays;

/** The dense loops of the forward and backward passes, written so the JIT can vectorise the inner ones. */
final class Kernels {

    static final float NORM_EPSILON = 1e-5f;
    private static final float GELU_C = (float) Math.sqrt(2 / Math.PI);
    private static final float GELU_A = 0.044715f;

    private Kernels() {
    }

    /** y[rows][out] = x[rows][in] w[in][out]. */
    static void matmul(float[] x, int xOff, int rows, int in, float[] w, int wOff, int out, float[] y, int yOff) {
        for (int r = 0; r < rows; r++) {
            int yr = yOff + r * out;
            Arrays.fill(y, yr, yr + out, 0f);
            int xr = xOff + r * in;
            for (int i = 0; i < in; i++) {
                float xi = x[xr + i];
                int wr = wOff + i * out;
                for (int j = 0; j < out; j++) {
                    y[yr + j] += xi * w[wr + j];
                }
            }
        }
    }

    /** dw[in][out] += x^T dy, and dx[rows][in] (overwritten, or added to when accumulate) = dy w^T. */
    static void matmulBackward(float[] x, int xOff, int rows, int in, float[] w, int wOff, int out, float[] dy,
            int dyOff, float[] dw, float[] dx, int dxOff, boolean accumulate) {
        for (int r = 0; r < rows; r++) {
            int xr = xOff + r * in;
            int dyr = dyOff + r * out;
            int dxr = dxOff + r * in;
            for (int i = 0; i < in; i++) {
                float xi = x[xr + i];
                int wr = wOff + i * out;
                float s0 = 0f;
                float s1 = 0f;
                float s2 = 0f;
                float s3 = 0f;
                int j = 0;
                for (; j + 3 < out; j += 4) {
                    float d0 = dy[dyr + j];
                    float d1 = dy[dyr + j + 1];
                    float d2 = dy[dyr + j + 2];
                    float d3 = dy[dyr + j + 3];
                    s0 += d0 * w[wr + j];
                    s1 += d1 * w[wr + j + 1];
                    s2 += d2 * w[wr + j + 2];
                    s3 += d3 * w[wr + j + 3];
                    dw[wr + j] += xi * d0;
                    dw[wr + j + 1] += xi * d1;
                    dw[wr + j + 2] += xi * d2;
                    dw[wr + j + 3] += xi * d3;
                }
                for (; j < out; j++) {
                    float d = dy[dyr + j];
                    s0 += d * w[wr + j];
                    dw[wr + j] += xi * d;
                }
                float sum = (s0 + s1) + (s2 + s3);
                if (accumulate) {
                    dx[dxr + i] += sum;
                } else {
                    dx[dxr + i] = sum;
                }
            }
        }
    }

    static void addBias(float[] y, int yOff, int rows, int out, float[] p, int bOff) {
        for (int r = 0; r < rows; r++) {
            int yr = yOff + r * out;
            for (int j = 0; j < out; j++) {
                y[yr + j] += p[bOff + j];
            }
        }
    }

    static void biasBackward(float[] dy, int dyOff, int rows, int out, float[] db, int bOff) {
        for (int r = 0; r < rows; r++) {
            int yr = dyOff + r * out;
            for (int j = 0; j < out; j++) {
                db[bOff + j] += dy[yr + j];
            }
        }
    }

    /** Layer normalisation of each row, keeping the mean and reciprocal standard deviation for the backward pass. */
    static void norm(float[] x, int xOff, int rows, int width, float[] p, int gain, int bias, float[] y, int yOff,
            float[] mean, float[] rstd, int statOff) {
        for (int r = 0; r < rows; r++) {
            int xr = xOff + r * width;
            float m = 0f;
            for (int i = 0; i < width; i++) {
                m += x[xr + i];
            }
            m /= width;
            float var = 0f;
            for (int i = 0; i < width; i++) {
                float c = x[xr + i] - m;
                var += c * c;
            }
            var /= width;
            float rs = (float) (1.0 / Math.sqrt(var + NORM_EPSILON));
            int yr = yOff + r * width;
            for (int i = 0; i < width; i++) {
                y[yr + i] = (x[xr + i] - m) * rs * p[gain + i] + p[bias + i];
            }
            if (mean != null) {
                mean[statOff + r] = m;
                rstd[statOff + r] = rs;
            }
        }
    }

    /** Adds the gradient with respect to the normalised rows' input to dx, and the gain and bias gradients to g. */
    static void normBackward(float[] x, int xOff, int rows, int width, float[] p, int gain, int bias, float[] mean,
            float[] rstd, float[] dy, int dyOff, float[] g, float[] dx, int dxOff) {
        for (int r = 0; r < rows; r++) {
            int xr = xOff + r * width;
            int dyr = dyOff + r * width;
            float m = mean[r];
            float rs = rstd[r];
            float sumD = 0f;
            float sumDX = 0f;
            for (int i = 0; i < width; i++) {
                float xhat = (x[xr + i] - m) * rs;
                float d = dy[dyr + i];
                g[gain + i] += d * xhat;
                g[bias + i] += d;
                float dxhat = d * p[gain + i];
                sumD += dxhat;
                sumDX += dxhat * xhat;
            }
            sumD /= width;
            sumDX /= width;
            int dxr = dxOff + r * width;
            for (int i = 0; i < width; i++) {
                float xhat = (x[xr + i] - m) * rs;
                float dxhat = dy[dyr + i] * p[gain + i];
                dx[dxr + i] += rs * (dxhat - sumD - xhat * sumDX);
            }
        }
    }

    static float gelu(float x) {
        float u = GELU_C * (x + GELU_A * x * x * x);
        return 0.5f * x * (1f + (float) Math.tanh(u));
    }

    static float geluDerivative(float x) {
        float u = GELU_C * (x + GELU_A * x * x * x);
        float t = (float) Math.tanh(u);
        return 0.5f * (1f + t) + 0.5f * x * (1f - t * t) * GELU_C * (1f + 3f * GELU_A * x * x);
    }

    static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        float s0 = 0f;
        float s1 = 0f;
        int i = 0;
        for (; i + 1 < n; i += 2) {
            s0 += a[aOff + i] * b[bOff + i];
            s1 += a[aOff + i + 1] * b[bOff + i + 1];
        }
        for (; i < n; i++) {
            s0 += a[aOff + i] * b[bOff + i];
        }
        return s0 + s1;
    }

    /** y += a * x. */
    static void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n) {
        for (int i = 0; i < n; i++) {
            y[yOff + i] += a * x[xOff + i];
        }
    }
}

package dev.fulcrum.tiny;

/** The Adam optimiser (bias-corrected first and second moments) over the flat parameter array. */
final class Adam {

    private static final double BETA1 = 0.9;
    private static final double BETA2 = 0.999;
    private static final double EPSILON = 1e-8;

    private final float[] first;
    private final float[] second;
    private int steps;

    Adam(int size) {
        this.first = new float[size];
        this.second = new float[size];
    }

    /** One step of size {@code learningRate} (0 keeps the weights, though the moments still move). */
    void step(float[] params, float[] grads, double learningRate) {
        steps++;
        double c1 = 1 - Math.pow(BETA1, steps);
        double c2 = 1 - Math.pow(BETA2, steps);
        float b1 = (float) BETA1;
        float b2 = (float) BETA2;
        float lr = (float) (learningRate * Math.sqrt(c2) / c1);
        float eps = (float) (EPSILON * Math.sqrt(c2));
        for (int i = 0; i < params.length; i++) {
            float g = grads[i];
            float m = b1 * first[i] + (1 - b1) * g;
            float v = b2 * second[i] + (1 - b2) * g * g;
            first[i] = m;
            second[i] = v;
            params[i] -= lr * m / ((float) Math.sqrt(v) + eps);
        }
    }

    /** Scales grads down to at most maxNorm in L2 norm; returns the norm before scaling. */
    static double clip(float[] grads, double maxNorm) {
        double sum = 0;
        for (float g : grads) {
            sum += (double) g * g;
        }
        double norm = Math.sqrt(sum);
        if (norm > maxNorm) {
            float factor = (float) (maxNorm / norm);
            for (int i = 0; i < grads.length; i++) {
                grads[i] *= factor;
            }
        }
        return norm;
    }
}

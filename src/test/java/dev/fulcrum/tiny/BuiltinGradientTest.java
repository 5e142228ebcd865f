package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

/** The hand-written backward pass against central finite differences, on a tiny model so every weight is checked. */
class BuiltinGradientTest {

    private static final ModelShape TINY = new ModelShape(ChatTemplate.VOCAB, 12, 8, 2, 2, 16);

    private static BuiltinModel perturbedTiny() {
        BuiltinModel model = BuiltinModel.initial(TINY, 7);
        Random random = new Random(11);
        for (int i = 0; i < model.params.length; i++) {
            model.params[i] += (float) (random.nextGaussian() * 0.3);
        }
        return model;
    }

    private static double loss(SequencePass pass, int[] tokens, int[] targets, float[] coefficient) {
        pass.forward(tokens, 0, tokens.length);
        double sum = 0;
        for (int t = 0; t < tokens.length; t++) {
            if (coefficient[t] != 0f) {
                sum += coefficient[t] * pass.logProb(t, targets[t]);
            }
        }
        return sum;
    }

    @Test
    void backwardMatchesFiniteDifferencesForEveryWeight() {
        BuiltinModel model = perturbedTiny();
        Random random = new Random(3);
        int n = TINY.context;
        int[] tokens = new int[n];
        int[] targets = new int[n];
        float[] coefficient = new float[n];
        for (int t = 0; t < n; t++) {
            tokens[t] = random.nextInt(TINY.vocab);
            targets[t] = random.nextInt(TINY.vocab);
            coefficient[t] = t % 3 == 1 ? 0f : (float) random.nextGaussian();
        }
        // make the scored tokens' embeddings and the targets' head rows matter by reusing a few tokens
        for (int t = 0; t < n; t++) {
            tokens[t] = tokens[t] % 5;
            targets[t] = targets[t] % 7;
        }
        SequencePass pass = new SequencePass(TINY, model.params);
        float[] grads = new float[model.params.length];
        loss(pass, tokens, targets, coefficient);
        pass.backward(targets, coefficient, grads);

        double eps = 1e-2;
        int checked = 0;
        double worst = 0;
        for (int i = 0; i < model.params.length; i++) {
            float saved = model.params[i];
            model.params[i] = (float) (saved + eps);
            double up = loss(pass, tokens, targets, coefficient);
            model.params[i] = (float) (saved - eps);
            double down = loss(pass, tokens, targets, coefficient);
            model.params[i] = saved;
            double numeric = (up - down) / (2 * eps);
            double analytic = grads[i];
            double error = Math.abs(numeric - analytic) / (Math.abs(numeric) + Math.abs(analytic) + 1e-2);
            worst = Math.max(worst, error);
            assertTrue(error < 2e-2, "parameter " + i + ": analytic " + analytic + " numeric " + numeric);
            if (Math.abs(analytic) > 1e-3) {
                checked++;
            }
        }
        // most weights influence this loss, so the check is not vacuous
        assertTrue(checked > model.params.length / 4, "only " + checked + " weights with a visible gradient");
        System.out.printf("gradient check: %d weights, %d with |g| > 1e-3, worst relative error %.2e%n",
                model.params.length, checked, worst);
    }

    @Test
    void incrementalDecodingMatchesTheTrainingForwardPass() {
        BuiltinModel model = perturbedTiny();
        int[] tokens = { ChatTemplate.USER, 'h', 'i', ChatTemplate.END, ChatTemplate.ASSISTANT, 'y', 'o', 'u', '!',
                0xC3, 0xA9, ChatTemplate.END };
        SequencePass pass = new SequencePass(TINY, model.params);
        pass.forward(tokens, 0, tokens.length);
        Decoder decoder = new Decoder(TINY, model.params);
        for (int t = 0; t < tokens.length; t++) {
            float[] logits = decoder.step(tokens[t], true);
            double max = Double.NEGATIVE_INFINITY;
            for (float z : logits) {
                max = Math.max(max, z);
            }
            double sum = 0;
            for (float z : logits) {
                sum += Math.exp(z - max);
            }
            for (int target : new int[] { 'a', 0xC3, ChatTemplate.END }) {
                double expected = logits[target] - max - Math.log(sum);
                assertEquals(expected, pass.logProb(t, target), 1e-4);
            }
        }
    }

    @Test
    void gradientsAccumulateAcrossSequences() {
        BuiltinModel model = perturbedTiny();
        int[] a = { 1, 2, 3, 4, 5 };
        int[] b = { 4, 3, 2, 1, 0 };
        float[] coefficient = { 1, -1, 0.5f, 0, 2 };
        SequencePass pass = new SequencePass(TINY, model.params);
        float[] separateA = new float[model.params.length];
        float[] separateB = new float[model.params.length];
        float[] together = new float[model.params.length];
        loss(pass, a, b, coefficient);
        pass.backward(b, coefficient, separateA);
        loss(pass, a, b, coefficient);
        pass.backward(b, coefficient, together);
        loss(pass, b, a, coefficient);
        pass.backward(a, coefficient, separateB);
        loss(pass, b, a, coefficient);
        pass.backward(a, coefficient, together);
        float[] sum = new float[model.params.length];
        for (int i = 0; i < sum.length; i++) {
            sum[i] = separateA[i] + separateB[i];
        }
        assertArrayEquals(sum, together, 1e-5f);
    }
}

package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** Greedy choice, the nucleus cut and the tokens that are never sampled. */
class TokenSamplerTest {

    private static float[] logits() {
        float[] logits = new float[ChatTemplate.VOCAB];
        Arrays.fill(logits, -10f);
        logits['a'] = (float) Math.log(0.5);
        logits['b'] = (float) Math.log(0.3);
        logits['c'] = (float) Math.log(0.2);
        logits[ChatTemplate.USER] = 5f;
        return logits;
    }

    private static int[] counts(double temperature, double topP) {
        TokenSampler sampler = new TokenSampler(ChatTemplate.VOCAB, temperature, topP);
        Random random = new Random(1);
        int[] counts = new int[ChatTemplate.VOCAB];
        for (int i = 0; i < 10_000; i++) {
            counts[sampler.sample(logits(), random)]++;
        }
        return counts;
    }

    @Test
    void greedyTakesTheLikeliestAllowedToken() {
        assertEquals('a', new TokenSampler(ChatTemplate.VOCAB, 0, 1).sample(logits(), new Random(1)));
    }

    @Test
    void temperatureOneFollowsTheDistributionAndSkipsRoleHeaders() {
        int[] counts = counts(1, 1);
        assertEquals(0, counts[ChatTemplate.USER]);
        assertEquals(0.5, counts['a'] / 10_000.0, 0.03);
        assertEquals(0.3, counts['b'] / 10_000.0, 0.03);
        assertEquals(0.2, counts['c'] / 10_000.0, 0.03);
    }

    @Test
    void topPKeepsTheSmallestNucleus() {
        int[] counts = counts(1, 0.75);
        assertEquals(0, counts['c']);
        assertEquals(0.625, counts['a'] / 10_000.0, 0.03);
        assertEquals(10_000, counts['a'] + counts['b']);
        assertEquals(10_000, counts(1, 0.4)['a']);
        assertEquals(10_000, counts(1, 0)['a']);
    }

    @Test
    void lowTemperatureSharpens() {
        int[] counts = counts(0.1, 1);
        assertTrue(counts['a'] > 9_900, "a: " + counts['a']);
    }
}

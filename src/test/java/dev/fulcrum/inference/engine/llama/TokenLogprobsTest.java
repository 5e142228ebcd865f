package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Log probabilities are a log-softmax of the logits, the top ones in order. */
class TokenLogprobsTest {

    @Test
    void aLogSoftmaxOfTheLogits() {
        float[] logits = { 1f, 3f, 2f, -1f };
        double norm = Math.log(Math.exp(1) + Math.exp(3) + Math.exp(2) + Math.exp(-1));
        Generation.Token token = TokenLogprobs.of(2, new byte[0], logits, 3);
        assertEquals(2 - norm, token.logprob(), 1e-6);
        assertArrayEquals(new int[] { 1, 2, 0 }, token.topIds());
        assertEquals(3 - norm, token.topLogprobs()[0], 1e-6);
        assertEquals(2 - norm, token.topLogprobs()[1], 1e-6);
        assertEquals(1 - norm, token.topLogprobs()[2], 1e-6);
        assertEquals(0, TokenLogprobs.of(0, new byte[0], logits, 0).topIds().length);
    }
}

package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The log-probabilities of generated tokens, against numbers computed by hand. */
class LogprobsTest {

    @Test
    void theSoftmaxIsOverTheTokensTheModelMayEmit() {
        float[] logits = new float[ChatTemplate.VOCAB];
        Arrays.fill(logits, Float.NEGATIVE_INFINITY);
        logits['a'] = 2;
        logits['b'] = 1;
        logits[ChatTemplate.END] = 0;
        logits[ChatTemplate.USER] = 50; // a role header is never emitted, so it takes no probability
        Logprobs logprobs = new Logprobs(2);
        logprobs.record(logits, 'b');
        double total = Math.exp(2) + Math.exp(1) + Math.exp(0);
        TokenLogprob b = logprobs.all().get(0);
        assertEquals('b', b.token());
        assertEquals(Math.log(Math.exp(1) / total), b.logprob(), 1e-9);
        assertEquals(List.of((int) 'b'), b.bytes());
        assertEquals("b", b.text());
        assertEquals(List.of((int) 'a', (int) 'b'), b.top().stream().map(TokenLogprob::token).toList());
        assertEquals(Math.log(Math.exp(2) / total), b.top().get(0).logprob(), 1e-9);
    }

    @Test
    void theEndOfTheTurnAndPartialCharactersHaveTheirOwnSpelling() {
        TokenLogprob end = new TokenLogprob(ChatTemplate.END, -1, List.of());
        assertEquals(TokenLogprob.END_TEXT, end.text());
        assertNull(end.bytes());
        TokenLogprob partial = new TokenLogprob(0xE2, -1, List.of());
        assertEquals("\uFFFD", partial.text());
        assertEquals(List.of(0xE2), partial.bytes());
    }

    @Test
    void takeNewHandsEachTokenOnceAndAStopStringIsCutOff() {
        float[] logits = new float[ChatTemplate.VOCAB];
        Logprobs logprobs = new Logprobs(0);
        for (char c : "abcd".toCharArray()) {
            logprobs.record(logits, c);
        }
        assertEquals(4, logprobs.takeNew().size());
        assertEquals(List.of(), logprobs.takeNew());
        logprobs.keepBytes(2);
        assertEquals(List.of((int) 'a', (int) 'b'), logprobs.all().stream().map(TokenLogprob::token).toList());
        assertEquals(List.of(), logprobs.all().get(0).top());
        assertThrows(IllegalArgumentException.class, () -> new Logprobs(21));
    }

    @Test
    void aGenerationRecordsWhatItAnswers() {
        BuiltinModel model = BuiltinModel.initial();
        Logprobs logprobs = new Logprobs(1);
        Generation generation = model.generate(List.of(new ChatTurn("user", "hello")), Sampling.greedy(6), null,
                logprobs);
        List<TokenLogprob> tokens = logprobs.all();
        byte[] bytes = new byte[tokens.size()];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) tokens.get(i).token();
        }
        assertEquals(generation.text(), new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(generation, model.generate(List.of(new ChatTurn("user", "hello")), Sampling.greedy(6), null),
                "recording changes nothing of the answer");
    }
}

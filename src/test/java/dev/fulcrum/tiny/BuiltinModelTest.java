package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

/** The built-in model's template, weights format and sampling behaviour. */
class BuiltinModelTest {

    private static final BuiltinModel MODEL = BuiltinModel.initial();
    private static final List<ChatTurn> HELLO = List.of(new ChatTurn("system", "Be brief."),
            new ChatTurn("user", "Hello, wörld?"));

    private static Sampling sampled(int maxTokens, List<String> stop, long seed) {
        return new Sampling(1.0, 1.0, maxTokens, stop, seed);
    }

    private static byte[] bytes(BuiltinModel model) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        model.write(out);
        return out.toByteArray();
    }

    @Test
    void sizeAndContext() {
        assertEquals(MODEL.params.length, MODEL.parameterCount());
        assertTrue(MODEL.parameterCount() >= 200_000 && MODEL.parameterCount() <= 2_000_000,
                "parameters: " + MODEL.parameterCount());
        assertEquals(256, MODEL.contextLength());
    }

    @Test
    void promptTemplateIsByteLevelWithRoleHeaders() {
        int[] tokens = MODEL.encodePrompt(List.of(new ChatTurn("system", "S"), new ChatTurn("user", "é"),
                new ChatTurn("assistant", "a"), new ChatTurn("tool", "")));
        assertArrayEquals(new int[] { ChatTemplate.SYSTEM, 'S', ChatTemplate.END, ChatTemplate.USER, 0xC3, 0xA9,
                ChatTemplate.END, ChatTemplate.ASSISTANT, 'a', ChatTemplate.END, ChatTemplate.TOOL, ChatTemplate.END,
                ChatTemplate.ASSISTANT }, tokens);
    }

    @Test
    void longConversationsKeepTheirEndAndTheAssistantHeader() {
        List<ChatTurn> conversation = List.of(new ChatTurn("user", "x".repeat(1000)), new ChatTurn("user", "last"));
        int[] tokens = MODEL.encodePrompt(conversation);
        assertEquals(MODEL.contextLength() - 1, tokens.length);
        assertEquals(ChatTemplate.ASSISTANT, tokens[tokens.length - 1]);
        assertEquals(ChatTemplate.END, tokens[tokens.length - 2]);
        assertEquals('t', tokens[tokens.length - 3]);
        Generation generation = MODEL.generate(conversation, Sampling.greedy(3), null);
        assertEquals(MODEL.contextLength() - 1, generation.promptTokens());
    }

    @Test
    void initialWeightsAreDeterministic() throws IOException {
        assertArrayEquals(bytes(MODEL), bytes(BuiltinModel.initial()));
        assertEquals(MODEL.generate(HELLO, sampled(20, List.of(), 5), null),
                BuiltinModel.initial().generate(HELLO, sampled(20, List.of(), 5), null));
    }

    @Test
    void theSameSeedGivesTheSameTextAndOtherSeedsDiffer() {
        Generation first = MODEL.generate(HELLO, sampled(24, List.of(), 42), null);
        assertEquals(first, MODEL.generate(HELLO, sampled(24, List.of(), 42), null));
        List<String> others = new ArrayList<>();
        for (long seed = 43; seed < 48; seed++) {
            others.add(MODEL.generate(HELLO, sampled(24, List.of(), seed), null).text());
        }
        assertFalse(others.stream().allMatch(first.text()::equals), "every seed gave the same text");
        assertEquals(MODEL.generate(HELLO, Sampling.greedy(10), null),
                MODEL.generate(HELLO, new Sampling(0, 0.5, 10, null, null), null));
    }

    @Test
    void writeThenReadGivesIdenticalOutputs() throws IOException {
        BuiltinModel trained = MODEL.copy();
        BuiltinTrainer.sft(trained,
                List.of(List.of(new TrainingTurn("user", "hi", false), new TrainingTurn("assistant", "hello", true))),
                new TrainerConfig(1e-2, 1, 3), (s, t, m) -> {
                }, () -> false);
        BuiltinModel read = BuiltinModel.read(new ByteArrayInputStream(bytes(trained)));
        assertArrayEquals(trained.params, read.params);
        assertEquals(trained.parameterCount(), read.parameterCount());
        for (long seed = 0; seed < 3; seed++) {
            assertEquals(trained.generate(HELLO, sampled(30, List.of(), seed), null),
                    read.generate(HELLO, sampled(30, List.of(), seed), null));
        }
        assertNotEquals(MODEL.generate(HELLO, Sampling.greedy(30), null).text(),
                read.generate(HELLO, Sampling.greedy(30), null).text());
    }

    @Test
    void garbageIsRejected() throws IOException {
        byte[] good = bytes(MODEL);
        byte[] random = new byte[good.length];
        new Random(1).nextBytes(random);
        assertThrows(IOException.class, () -> BuiltinModel.read(new ByteArrayInputStream(random)));
        assertThrows(IOException.class, () -> BuiltinModel.read(new ByteArrayInputStream(new byte[0])));
        assertThrows(IOException.class,
                () -> BuiltinModel.read(new ByteArrayInputStream(Arrays.copyOf(good, good.length - 9))));
        byte[] flipped = good.clone();
        flipped[good.length / 2] ^= 1;
        assertThrows(IOException.class, () -> BuiltinModel.read(new ByteArrayInputStream(flipped)));
        byte[] version = good.clone();
        version[11] = 9;
        assertThrows(IOException.class, () -> BuiltinModel.read(new ByteArrayInputStream(version)));
        byte[] width = good.clone();
        width[23] = 7;
        assertThrows(IOException.class, () -> BuiltinModel.read(new ByteArrayInputStream(width)));
    }

    @Test
    void copiesAreIndependent() {
        BuiltinModel copy = MODEL.copy();
        copy.params[0] += 1;
        assertNotEquals(copy.params[0], MODEL.params[0]);
    }

    @Test
    void maxTokensEndsWithLength() {
        for (long seed = 0; seed < 5; seed++) {
            Generation unlimited = MODEL.generate(HELLO, sampled(400, List.of(), seed), null);
            Generation limited = MODEL.generate(HELLO, sampled(4, List.of(), seed), null);
            if (unlimited.completionTokens() > 4) {
                assertEquals(FinishReason.LENGTH, limited.finishReason());
                assertEquals(4, limited.completionTokens());
                String text = limited.text();
                // a character cut off by the limit shows as one replacement character
                String whole = text.endsWith("\uFFFD") ? text.substring(0, text.length() - 1) : text;
                assertTrue(unlimited.text().startsWith(whole), text + " / " + unlimited.text());
                return;
            }
        }
        throw new AssertionError("no sample ran past four tokens");
    }

    @Test
    void generationContinuesPastTheContextLength() {
        Generation greedy = MODEL.generate(HELLO, Sampling.greedy(MODEL.contextLength() + 50), null);
        if (greedy.finishReason() == FinishReason.LENGTH) {
            assertEquals(MODEL.contextLength() + 50, greedy.completionTokens());
        }
        Generation unbounded = MODEL.generate(HELLO, Sampling.greedy(0), null);
        assertTrue(unbounded.completionTokens() <= MODEL.contextLength());
    }

    @Test
    void stopStringsCutTheTextAndAreNeverStreamed() {
        int tested = 0;
        for (long seed = 0; seed < 40 && tested < 5; seed++) {
            Generation full = MODEL.generate(HELLO, sampled(40, List.of(), seed), null);
            String text = full.text();
            if (text.length() < 12) {
                continue;
            }
            String stop = text.substring(6, 9);
            int at = text.indexOf(stop);
            List<String> pieces = new ArrayList<>();
            Generation stopped = MODEL.generate(HELLO, sampled(40, List.of("never-there", stop), seed), piece -> {
                pieces.add(piece);
                return true;
            });
            assertEquals(text.substring(0, at), stopped.text());
            assertEquals(FinishReason.STOP, stopped.finishReason());
            assertEquals(stopped.text(), String.join("", pieces));
            assertTrue(stopped.completionTokens() <= full.completionTokens());
            tested++;
        }
        assertEquals(5, tested);
    }

    @Test
    void streamedPiecesAddUpToTheText() {
        for (long seed = 0; seed < 10; seed++) {
            List<String> pieces = new ArrayList<>();
            Generation generation = MODEL.generate(HELLO, sampled(60, List.of(), seed), piece -> {
                pieces.add(piece);
                return true;
            });
            assertEquals(generation.text(), String.join("", pieces));
            for (String piece : pieces) {
                assertFalse(piece.isEmpty());
                assertWholeCodePoints(piece);
            }
        }
    }

    static void assertWholeCodePoints(String piece) {
        for (int i = 0; i < piece.length(); i++) {
            char c = piece.charAt(i);
            if (Character.isHighSurrogate(c)) {
                assertTrue(i + 1 < piece.length() && Character.isLowSurrogate(piece.charAt(i + 1)), "split pair");
                i++;
            } else {
                assertFalse(Character.isLowSurrogate(c), "lone low surrogate");
            }
        }
    }

    @Test
    void theListenerCancelsPromptly() {
        List<String> pieces = new ArrayList<>();
        Generation generation = MODEL.generate(HELLO, sampled(200, List.of(), 3), piece -> {
            pieces.add(piece);
            return false;
        });
        assertEquals(1, pieces.size());
        assertEquals(FinishReason.STOP, generation.finishReason());
        assertTrue(generation.completionTokens() <= 4, "tokens after cancel: " + generation.completionTokens());
        assertTrue(generation.text().startsWith(pieces.get(0)));
    }

    @Test
    void concurrentGenerationsOnASharedModelMatchSequentialOnes() throws Exception {
        List<Generation> expected = new ArrayList<>();
        for (long seed = 0; seed < 8; seed++) {
            expected.add(MODEL.generate(HELLO, sampled(30, List.of(), seed), null));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Generation>> futures = new ArrayList<>();
            for (long seed = 0; seed < 8; seed++) {
                long s = seed;
                futures.add(pool.submit(() -> MODEL.generate(HELLO, sampled(30, List.of(), s), null)));
            }
            for (int i = 0; i < 8; i++) {
                assertEquals(expected.get(i), futures.get(i).get());
            }
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void aShortReplyTakesMilliseconds() {
        for (int i = 0; i < 20; i++) {
            MODEL.generate(HELLO, Sampling.greedy(32), null);
        }
        long start = System.nanoTime();
        int runs = 20;
        for (int i = 0; i < runs; i++) {
            MODEL.generate(HELLO, Sampling.greedy(32), null);
        }
        double millis = (System.nanoTime() - start) / 1e6 / runs;
        System.out.printf("built-in model: %d parameters, %.1f ms per 32-token reply%n", MODEL.parameterCount(),
                millis);
        assertTrue(millis < 500, millis + " ms");
    }
}

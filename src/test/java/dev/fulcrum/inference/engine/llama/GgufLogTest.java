package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Request text never reaches the log through llama.cpp: a JVM of its own ({@link GgufLogProbe}, so that the native
 * stderr can be read) loads the tiny GGUF with Fulcrum's engine, chats and embeds a text with a marker, and its whole
 * output must not hold the marker; the same with the bindings' own log prints it (the test can see it).
 */
class GgufLogTest {

    private static final Path GGUF = GgufCompletionsTest.TINY_GGUF.resolve("model.gguf");

    @BeforeAll
    static void tinyGguf() throws Exception {
        if (!Files.exists(GGUF)) {
            GgufCompletionsTest.tinyGguf();
        }
    }

    private static String probe(String mode, String marker) throws IOException, InterruptedException {
        Path out = Files.createTempFile("gguf-log", ".txt");
        try {
            Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), GgufLogProbe.class.getName(), GGUF.toString(), mode,
                    marker).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            assertTrue(process.waitFor(3, TimeUnit.MINUTES), "the probe ends");
            String output = Files.readString(out, StandardCharsets.UTF_8);
            assertTrue(output.contains("probe: done"), output);
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    @Test
    void promptsAndEmbeddingInputsAreNotLogged() throws Exception {
        String marker = "zebra-" + Long.toHexString(System.nanoTime());
        String quiet = probe("fulcrum", marker);
        assertFalse(quiet.contains(marker), quiet);
        String loud = probe("bindings", marker);
        assertTrue(loud.contains(marker), "with the bindings' own log the marker is printed: " + loud);
    }
}

package dev.fulcrum.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a command (npm, node) in a directory of the real clients' end-to-end tests, as those tests need it: within a
 * time, with the variables given, without the developer's own {@code WANDB_*} and {@code OPENAI_*} settings; fails the
 * test with the command's output when it fails or does not end.
 */
public final class NodeScripts {

    private NodeScripts() {
    }

    public static String run(Path directory, Duration timeout, Map<String, String> env, String... command)
            throws IOException, InterruptedException {
        File log = Files.createTempFile("node-script", ".log").toFile();
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(log);
        builder.environment().keySet().removeIf(name -> name.startsWith("WANDB_") || name.startsWith("OPENAI_"));
        builder.environment().putAll(env);
        Process process = builder.start();
        boolean ended = process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly();
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        Files.delete(log.toPath());
        assertTrue(ended, String.join(" ", command) + " did not end in " + timeout + ":\n" + output);
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}

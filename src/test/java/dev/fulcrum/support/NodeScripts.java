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
        return run(directory, timeout, env, null, command);
    }

    /**
     * A process the command depends on (a worker it needs): asked every second while the command runs, and shown beside
     * the command's output when it fails.
     */
    public interface Companion {

        /** Null while the command can still succeed; else why it cannot (the command is then stopped). */
        String problem();

        /** What to show beside the command's output when it fails. */
        String log();
    }

    /** {@link #run(Path, Duration, Map, String...)}, stopped early when {@code companion} (if any) has a problem. */
    public static String run(Path directory, Duration timeout, Map<String, String> env, Companion companion,
            String... command) throws IOException, InterruptedException {
        File log = Files.createTempFile("node-script", ".log").toFile();
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(log);
        builder.environment().keySet().removeIf(name -> name.startsWith("WANDB_") || name.startsWith("OPENAI_"));
        builder.environment().putAll(env);
        Process process = builder.start();
        long deadline = System.nanoTime() + timeout.toNanos();
        String problem = null;
        boolean ended = false;
        while (!ended && problem == null && System.nanoTime() < deadline) {
            ended = process.waitFor(Math.min(1000, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)),
                    TimeUnit.MILLISECONDS);
            if (!ended && companion != null) {
                problem = companion.problem();
            }
        }
        if (!ended) {
            process.destroyForcibly();
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        Files.delete(log.toPath());
        String beside = companion == null ? "" : "\n--- beside it (the end):\n" + tail(companion.log(), 20_000);
        String what = String.join(" ", command);
        assertTrue(problem == null, what + " was stopped: " + problem + ":\n" + output + beside);
        assertTrue(ended, what + " did not end in " + timeout + ":\n" + output + beside);
        assertEquals(0, process.exitValue(), what + " failed:\n" + output + beside);
        return output;
    }

    private static String tail(String text, int chars) {
        return text.length() <= chars ? text : text.substring(text.length() - chars);
    }
}

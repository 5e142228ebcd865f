package dev.fulcrum.training;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.support.NodeScripts;

/**
 * The Python worker ({@code worker/}, console command {@code fulcrum-worker}) as the tests run it: its venv
 * ({@code worker/.venv}, made by {@code worker/scripts/test-env.sh} from the pinned {@code pyproject.toml}; nothing to
 * do when it is current), the tiny model it makes, and worker processes against this server. One CPU thread per
 * process: the machines the tests run on are small and shared.
 */
final class FulcrumWorkerProcess {

    static final Path WORKER = Path.of("worker").toAbsolutePath();
    static final Path EXECUTABLE = WORKER.resolve(".venv/bin/fulcrum-worker");
    static final Path TINY_MODEL = Path.of("target", "fulcrum-worker", "tiny-llama").toAbsolutePath();
    static final ObjectMapper JSON = new ObjectMapper();

    private static boolean ready;

    private FulcrumWorkerProcess() {
    }

    /** The venv and the tiny model, made once per test JVM (and on disk only when missing or stale). */
    static synchronized void prepare() throws IOException, InterruptedException {
        if (ready) {
            return;
        }
        NodeScripts.run(WORKER, Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
        if (!Files.exists(TINY_MODEL.resolve("config.json"))) {
            NodeScripts.run(WORKER, Duration.ofMinutes(5), Map.of(), EXECUTABLE.toString(), "make-tiny-model",
                    TINY_MODEL.toString());
        }
        ready = true;
    }

    /** Runs {@code fulcrum-worker args...} to its end; its output. */
    static String run(Duration timeout, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(EXECUTABLE.toString()));
        command.addAll(List.of(args));
        return NodeScripts.run(WORKER, timeout, Map.of("PYTHONUNBUFFERED", "1"), command.toArray(String[]::new));
    }

    /** The JSON lines of a command's output (its log lines are not JSON objects). */
    static List<JsonNode> jsonLines(String output) throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : output.split("\n")) {
            if (line.startsWith("{")) {
                lines.add(JSON.readTree(line));
            }
        }
        return lines;
    }

    /**
     * A running {@code fulcrum-worker run}, logging to a file; as the companion of a client script, a worker that exits
     * stops the script at once, and its log is shown with the script's output.
     */
    static final class Running implements AutoCloseable, NodeScripts.Companion {

        final Process process;
        final Path log;

        Running(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        @Override
        public String problem() {
            return process.isAlive() ? null : "the worker exited with code " + process.exitValue();
        }

        /** The worker's log so far. */
        @Override
        public String log() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(the worker's log " + log + " is unreadable: " + e + ")";
            }
        }

        /** Killed at once, as a crashed machine stops: no call to the server after this. */
        void kill() throws InterruptedException {
            process.descendants().forEach(ProcessHandle::destroyForcibly); // torchrun's processes, when it runs them
            process.destroyForcibly();
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the worker did not die");
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }

    static Running start(String server, String apiKey, String baseModel, String name, String... more)
            throws IOException {
        return start(List.of(EXECUTABLE.toString()), server, apiKey, baseModel, name, more);
    }

    /**
     * {@link #start} under torchrun ({@code torchrun --standalone --nproc_per_node N -m fulcrum_worker run ...}): each
     * job trained by {@code processes} processes (DDP, gloo on CPU), rank 0 alone speaking with the server.
     */
    static Running startDistributed(int processes, String server, String apiKey, String baseModel, String name,
            String... more) throws IOException {
        List<String> torchrun = List.of(WORKER.resolve(".venv/bin/torchrun").toString(), "--standalone",
                "--nproc_per_node=" + processes, "-m", "fulcrum_worker");
        return start(torchrun, server, apiKey, baseModel, name, more);
    }

    private static Running start(List<String> launcher, String server, String apiKey, String baseModel, String name,
            String... more) throws IOException {
        Path log = Files.createTempFile("fulcrum-worker-" + name, ".log");
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of("run", "--server", server, "--api-key", apiKey, "--base-model", baseModel,
                "--model-path", TINY_MODEL.toString(), "--name", name, "--threads", "1", "--wait", "5"));
        command.addAll(List.of(more));
        ProcessBuilder builder = new ProcessBuilder(command).directory(WORKER.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("PYTHONUNBUFFERED", "1");
        // this tree's worker, also where the venv's editable install points at another checkout of it
        builder.environment().put("PYTHONPATH", WORKER.resolve("src").toString());
        return new Running(builder.start(), log);
    }
}

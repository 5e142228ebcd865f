package dev.fulcrum.platform;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.awaitility.core.ConditionTimeoutException;

/**
 * Runs of the packaged application (target/quarkus-app) in an integration test, started the way a user starts them: on
 * the test's own data directory (so on an embedded PostgreSQL) and free port, with none of the caller's
 * {@code QUARKUS_} and {@code FULCRUM_} variables, each run's output in {@code target/<name>/run-<n>.log}.
 * {@link #close()} leaves no Fulcrum and no PostgreSQL of the test behind, and deletes the data directory.
 */
final class PackagedRuns implements AutoCloseable {

    private static final Duration STOP_WITHIN = Duration.ofSeconds(30);

    private final Path logs;
    private final Path dataDir;
    private final int port;
    private final List<Process> started = new ArrayList<>();
    private int runs;

    PackagedRuns(String name) throws IOException {
        logs = Path.of("target", name);
        Files.createDirectories(logs);
        dataDir = Files.createTempDirectory(name);
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
    }

    Path dataDir() {
        return dataDir;
    }

    Path logs() {
        return logs;
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** Starts the command on the data directory and port, with these further environment variables. */
    Process start(List<String> command, Map<String, String> environment) throws IOException {
        runs++;
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logs.resolve("run-" + runs + ".log").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("FULCRUM_"));
        env.put("FULCRUM_DATA_DIR", dataDir.toString());
        env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        env.put("QUARKUS_HTTP_HOST", "127.0.0.1");
        env.putAll(environment);
        Process process = builder.start();
        started.add(process);
        return process;
    }

    /** The output of the last run so far. */
    String lastLog() throws IOException {
        return Files.readString(logs.resolve("run-" + runs + ".log"), StandardCharsets.UTF_8);
    }

    /**
     * Polls path until it answers 200 and returns that answer; fails with the run's log when the process exits first or
     * the answer does not come within the time.
     */
    HttpResponse<String> await200(Process process, String path, Duration within, HttpClient http) throws IOException {
        try {
            return await(path + " 200 within " + within).atMost(within).pollInterval(Duration.ofMillis(250))
                    .until(() -> {
                        if (!process.isAlive()) {
                            fail("Fulcrum exited with " + process.exitValue() + " before " + path + " answered 200:\n"
                                    + lastLog());
                        }
                        try {
                            return http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(),
                                    HttpResponse.BodyHandlers.ofString());
                        } catch (IOException notListeningYet) {
                            // not listening yet, or a kept-alive connection to a killed run ended (EOF): keep waiting
                            return null;
                        }
                    }, answer -> answer != null && answer.statusCode() == 200);
        } catch (ConditionTimeoutException e) {
            return fail(path + " did not answer 200 within " + within + ":\n" + lastLog());
        }
    }

    /** The pid in the embedded PostgreSQL's postmaster.pid, while there is one. */
    Optional<Long> postmasterPid() throws IOException {
        Path pidFile = dataDir.resolve("postgres").resolve("postmaster.pid");
        List<String> lines = Files.exists(pidFile) ? Files.readAllLines(pidFile, StandardCharsets.UTF_8) : List.of();
        return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).trim()));
    }

    @Override
    public void close() throws IOException {
        for (Process process : started) {
            if (process.isAlive()) {
                process.destroyForcibly();
                waitQuietly(process.toHandle());
            }
        }
        postmasterPid().flatMap(ProcessHandle::of).filter(ProcessHandle::isAlive).filter(PackagedRuns::isPostgres)
                .ifPresent(postmaster -> {
                    postmaster.destroyForcibly();
                    waitQuietly(postmaster);
                });
        try (Stream<Path> paths = Files.walk(dataDir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    private static boolean isPostgres(ProcessHandle process) {
        return process.info().command().map(command -> command.contains("postgres")).orElse(false);
    }

    private static void waitQuietly(ProcessHandle process) {
        try {
            process.onExit().get(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            // best effort: cleanup must not hide the test's own failure
        }
    }
}

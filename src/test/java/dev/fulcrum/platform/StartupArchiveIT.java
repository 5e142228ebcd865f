package dev.fulcrum.platform;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start-up archive (scripts/startup-lib.sh): the one the build made for the JDK that runs it, and a JDK 25 AOT
 * cache made by scripts/startup-archive.sh, each used by scripts/run.sh, which the README's run command is. Each start
 * here is strict ({@code -Xshare:on}, {@code -XX:AOTMode=on}): a JVM that cannot use its archive exits instead of
 * starting without it, so a start that gets ready used it. And the log of such a start has no warning.
 */
class StartupArchiveIT {

    private static final Path APP = Path.of("target", "quarkus-app").toAbsolutePath();
    private static final Path LOGS = Path.of("target", "startup-archive-it");
    private static final Duration READY_WITHIN = Duration.ofSeconds(120);
    private static final String KEY = "fk_it-archive-key-0123456789";
    /** a line of the JVM's or of the application's that warns: HotSpot's unified logging, the launcher's, JBoss's */
    private static final Pattern WARNING = Pattern
            .compile("\\[warning\\]|^WARNING:| WARN |run\\.sh: no start-up archive", Pattern.MULTILINE);
    private static final Pattern JAVA_VERSION = Pattern.compile("^JAVA_VERSION=\"(\\d+)", Pattern.MULTILINE);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Process> started = new ArrayList<>();
    private Path dataDir;
    private int port;
    private int runs;

    @BeforeEach
    void prepare() throws IOException {
        dataDir = Files.createTempDirectory("fulcrum-archive-it");
        Files.createDirectories(LOGS);
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Process process : started) {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
        Path pidFile = dataDir.resolve("postgres").resolve("postmaster.pid");
        if (Files.exists(pidFile)) {
            long pid = Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).trim());
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        try (Stream<Path> paths = Files.walk(dataDir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void theBuildsArchiveStartsFulcrumWithoutAWarning() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        boolean aot = Runtime.version().feature() >= 25;
        Path archive = APP.resolve(aot ? "app.aot" : "app-cds.jsa");
        assertTrue(Files.isRegularFile(archive), archive + " is made by the package phase for the JDK that runs Maven");

        String log = startStrictly(java, aot);
        assertEquals(200, get("/v1/models").statusCode(), "a request with the bootstrap key");
        assertNoWarning(log);
    }

    @Test
    void aJdk25MakesItsAotCacheAndStartsWithIt() throws Exception {
        Optional<Path> jdk25 = jdk(25);
        Assumptions.assumeTrue(jdk25.isPresent(), "no JDK 25 or later in FULCRUM_TEST_JDK25 or /usr/lib/jvm");
        Path java = jdk25.get().resolve("bin").resolve("java");
        Files.deleteIfExists(APP.resolve("app.aot"));
        Files.deleteIfExists(APP.resolve("app.aot.id"));

        // without its cache, run.sh says so and starts all the same
        Process plain = start(java, "");
        String log = awaitReady(plain);
        assertTrue(log.contains("run.sh: no start-up archive of these jars for " + java), log);
        stop(plain);

        ProcessBuilder make = new ProcessBuilder("scripts/startup-archive.sh", APP.toString()).redirectErrorStream(true)
                .redirectOutput(LOGS.resolve("make-aot.log").toFile());
        make.environment().put("FULCRUM_JAVA", java.toString());
        Process making = make.start();
        started.add(making);
        assertTrue(making.waitFor(5, TimeUnit.MINUTES), "the training start ends");
        String made = Files.readString(LOGS.resolve("make-aot.log"));
        assertEquals(0, making.exitValue(), made);
        assertTrue(made.contains("startup-archive: " + APP.resolve("app.aot") + " for 25"), made);

        String cached = startStrictly(java, true);
        assertEquals(200, get("/v1/models").statusCode(), "a request with the bootstrap key");
        assertNoWarning(cached);
    }

    /** Starts Fulcrum through run.sh with java, strictly on its archive; returns the log once it is ready. */
    private String startStrictly(Path java, boolean aot) throws Exception {
        return awaitReady(start(java, aot ? "-XX:AOTMode=on" : "-Xshare:on"));
    }

    private Process start(Path java, String javaOpts) throws IOException {
        runs++;
        ProcessBuilder builder = new ProcessBuilder("scripts/run.sh").redirectErrorStream(true)
                .redirectOutput(LOGS.resolve("run-" + runs + ".log").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("FULCRUM_")
                || name.equals("JAVA_HOME") || name.equals("JAVA_OPTS"));
        env.put("FULCRUM_JAVA", java.toString());
        env.put("JAVA_OPTS", "-Xmx256m " + javaOpts);
        env.put("FULCRUM_DATA_DIR", dataDir.toString());
        env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        env.put("QUARKUS_HTTP_HOST", "127.0.0.1");
        env.put("FULCRUM_BOOTSTRAP_API_KEY", KEY);
        Process process = builder.start();
        started.add(process);
        return process;
    }

    private String awaitReady(Process process) throws Exception {
        try {
            await().atMost(READY_WITHIN).pollInterval(Duration.ofMillis(250)).until(() -> {
                if (!process.isAlive()) {
                    fail("Fulcrum exited with " + process.exitValue() + " before it was ready:\n" + lastLog());
                }
                try {
                    return get("/q/health/ready").statusCode() == 200;
                } catch (IOException notReadyYet) {
                    return false;
                }
            });
        } catch (ConditionTimeoutException e) {
            fail("Fulcrum was not ready within " + READY_WITHIN + ":\n" + lastLog());
        }
        return lastLog();
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "SIGTERM stops Fulcrum");
    }

    private static void assertNoWarning(String log) {
        Matcher warning = WARNING.matcher(log);
        if (warning.find()) {
            fail("a warning in the log of a start with its archive:\n" + log);
        }
    }

    private String lastLog() throws IOException {
        return Files.readString(LOGS.resolve("run-" + runs + ".log"));
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + KEY).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A JDK of at least this feature version: FULCRUM_TEST_JDK25, else one under /usr/lib/jvm (its release file). */
    private static Optional<Path> jdk(int feature) throws IOException {
        String given = System.getenv("FULCRUM_TEST_JDK25");
        if (given != null && !given.isBlank()) {
            return Optional.of(Path.of(given));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(home -> Files.isExecutable(home.resolve("bin").resolve("java")))
                    .filter(home -> releaseFeature(home) >= feature).sorted().findFirst();
        }
    }

    private static int releaseFeature(Path home) {
        try {
            Matcher version = JAVA_VERSION.matcher(Files.readString(home.resolve("release")));
            return version.find() ? Integer.parseInt(version.group(1)) : 0;
        } catch (IOException noReleaseFile) {
            return 0;
        }
    }
}

package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.fulcrum.support.LongProof;
import dev.fulcrum.support.PackagedJar;

/**
 * The start-up archive (scripts/startup-lib.sh): the one the build made for the JDK that runs it, and a JDK 25 AOT
 * cache made by scripts/startup-archive.sh, each used by scripts/run.sh, which the README's run command is. Each start
 * here is strict ({@code -Xshare:on}, {@code -XX:AOTMode=on}): a JVM that cannot use its archive exits instead of
 * starting without it, so a start that gets ready used it. And the log of such a start has no warning.
 */
class StartupArchiveIT {

    private static final Path APP = PackagedJar.APP;
    private static final Duration READY_WITHIN = Duration.ofSeconds(120);
    private static final String KEY = "fk_it-archive-key-0123456789";
    /** a line of the JVM's or of the application's that warns: HotSpot's unified logging, the launcher's, JBoss's */
    private static final Pattern WARNING = Pattern
            .compile("\\[warning\\]|^WARNING:| WARN |run\\.sh: no start-up archive", Pattern.MULTILINE);
    private static final Pattern JAVA_VERSION = Pattern.compile("^JAVA_VERSION=\"(\\d+)", Pattern.MULTILINE);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private PackagedRuns runs;

    @BeforeEach
    void prepare() throws IOException {
        runs = new PackagedRuns("startup-archive-it");
    }

    @AfterEach
    void cleanUp() throws IOException {
        runs.close();
    }

    @Test
    void theBuildsArchiveStartsFulcrumWithoutAWarning() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        boolean aot = Runtime.version().feature() >= 25;
        Path archive = APP.resolve(aot ? "startup.aot" : "startup.jsa");
        assertTrue(Files.isRegularFile(archive), archive + " is made by the package phase for the JDK that runs Maven");

        String log = startStrictly(java, aot);
        assertEquals(200, get("/v1/models").statusCode(), "a request with the bootstrap key");
        assertNoWarning(log);
    }

    @Test
    @LongProof // the build's own archive: theBuildsArchiveStartsFulcrumWithoutAWarning
    void aJdk25MakesItsAotCacheAndStartsWithIt() throws Exception {
        Optional<Path> jdk25 = jdk(25);
        Assumptions.assumeTrue(jdk25.isPresent(), "no JDK 25 or later in FULCRUM_TEST_JDK25 or /usr/lib/jvm");
        Path java = jdk25.get().resolve("bin").resolve("java");
        Files.deleteIfExists(APP.resolve("startup.aot"));
        Files.deleteIfExists(APP.resolve("startup.aot.id"));

        // without its cache, run.sh says so and starts all the same
        Process plain = start(java, "");
        String log = awaitReady(plain);
        assertTrue(log.contains("run.sh: no start-up archive of these jars for " + java), log);
        stop(plain);

        ProcessBuilder make = new ProcessBuilder("scripts/startup-archive.sh", APP.toString()).redirectErrorStream(true)
                .redirectOutput(runs.logs().resolve("make-aot.log").toFile());
        make.environment().put("FULCRUM_JAVA", java.toString());
        Process making = make.start();
        if (!making.waitFor(5, TimeUnit.MINUTES)) {
            making.destroyForcibly();
            fail("the training start did not end within 5 minutes");
        }
        String made = Files.readString(runs.logs().resolve("make-aot.log"));
        assertEquals(0, making.exitValue(), made);
        assertTrue(made.contains("startup-archive: " + APP.resolve("startup.aot") + " for 25"), made);

        String cached = startStrictly(java, true);
        assertEquals(200, get("/v1/models").statusCode(), "a request with the bootstrap key");
        assertNoWarning(cached);
    }

    /** Starts Fulcrum through run.sh with java, strictly on its archive; returns the log once it is ready. */
    private String startStrictly(Path java, boolean aot) throws Exception {
        return awaitReady(start(java, aot ? "-XX:AOTMode=on" : "-Xshare:on"));
    }

    private Process start(Path java, String javaOpts) throws IOException {
        // run.sh as the README runs it, its JDK from FULCRUM_JAVA (which goes before JAVA_HOME and the PATH)
        return runs.start(List.of("scripts/run.sh"), Map.of("FULCRUM_JAVA", java.toString(), "JAVA_OPTS",
                "-Xmx256m " + javaOpts, "FULCRUM_BOOTSTRAP_API_KEY", KEY));
    }

    private String awaitReady(Process process) throws Exception {
        runs.await200(process, "/q/health/ready", READY_WITHIN, http);
        return runs.lastLog();
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

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(runs.uri(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + KEY).GET().build();
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

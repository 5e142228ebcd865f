package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.fulcrum.support.PackagedJar;

/**
 * First starts on a fresh machine at the same moment: two packaged Fulcrums (one per core of the smallest machine the
 * suite is timed on), each with its own data directory, share a temporary directory in which the embedded PostgreSQL's
 * binaries have not been unpacked yet. Both start, and neither logs a warning or an error on the way. Two on the same
 * data directory: the second stops with one line naming the first, which keeps serving.
 */
class ConcurrentFirstStartsIT {

    /** Two race for the one unpacking as four did (four took 45 s on two cores). */
    private static final int STARTS = 2;
    private static final Duration READY_WITHIN = Duration.ofMinutes(4);
    private static final String KEY = "fk_it-first-starts-0123456789";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<PackagedRuns> runs = new ArrayList<>();
    private Path freshTmp;

    @AfterEach
    void cleanUp() throws IOException {
        for (PackagedRuns run : runs) {
            run.close();
        }
        if (freshTmp != null) {
            try (Stream<Path> paths = Files.walk(freshTmp)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void twoFirstStartsAtOnceBothStartAndASharedDataDirectoryIsRefusedInOneLine() throws Exception {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        freshTmp = Files.createTempDirectory("first-starts-tmp");
        List<String> command = PackagedJar.command("-Xmx256m", "-Djava.io.tmpdir=" + freshTmp);
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < STARTS; i++) {
            PackagedRuns run = new PackagedRuns("first-starts-it-" + i);
            runs.add(run);
            processes.add(run.start(command, Map.of("FULCRUM_BOOTSTRAP_API_KEY", KEY)));
        }
        for (int i = 0; i < STARTS; i++) {
            runs.get(i).await200(processes.get(i), "/q/health/ready", READY_WITHIN, http);
        }
        for (PackagedRuns run : runs) {
            List<String> complaints = run.lastLog().lines()
                    .filter(line -> line.contains(" WARN ") || line.contains(" ERROR ")).toList();
            assertEquals(List.of(), complaints, "warnings or errors of a first start");
        }

        // a second Fulcrum on the first one's data directory (and another port) is refused, the first one unharmed
        PackagedRuns first = runs.get(0);
        Process second = first.start(command, Map.of("FULCRUM_BOOTSTRAP_API_KEY", KEY, "QUARKUS_HTTP_PORT", "0"));
        assertTrue(second.waitFor(READY_WITHIN.toSeconds(), java.util.concurrent.TimeUnit.SECONDS),
                "the second one stops");
        assertTrue(second.exitValue() != 0, "with a failure status");
        List<String> named = first.lastLog().lines().filter(line -> line.contains("is in use by another Fulcrum"))
                .toList();
        // logged when it happens, and the line Quarkus stops with
        assertTrue(
                named.stream().anyMatch(
                        line -> line.startsWith("Configuration validation failed:") || line.contains("StartFailure: ")),
                first.lastLog());
        assertTrue(named.stream().allMatch(line -> line.contains("What to do:")), first.lastLog());
        assertEquals(200, first.await200(processes.get(0), "/q/health/ready", READY_WITHIN, http).statusCode());
    }
}

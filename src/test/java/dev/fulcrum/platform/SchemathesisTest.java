package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.SeededWorld;

/**
 * Schemathesis (pinned in {@code src/test/python/schemathesis/requirements.txt}) runs every contract of
 * {@code openapi/} and the GraphQL schema against the server, as its administrator, in a small world whose names the
 * path parameters carry, so that requests reach the operations' validation instead of a 404. A fixed seed and a small
 * number of examples per operation bound its time (docs/contributing.md, "Contract fuzzing"). The test fails with
 * Schemathesis's report of every contract where it found a server error, an undocumented status, content type or
 * header, or a body off its schema.
 */
@QuarkusTest
class SchemathesisTest {

    /** The documents of {@code openapi/} besides the GraphQL schema, each run on its own. */
    static final List<String> CONTRACTS = List.of("accounts", "artifacts", "automations", "datasets", "events",
            "inference", "runs", "tinker", "training", "wandb");
    static final String CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,"
            + "response_schema_conformance,response_headers_conformance,positive_data_within_documented_refusals";
    static final int MAX_EXAMPLES = 5;
    /** Contracts run at once: two, one per core of the smallest machine the suite is timed on. */
    static final int STREAMS = 2;
    /** The contracts by their time in the last timed run (target/schemathesis/times.txt), longest first. */
    static final List<String> LONGEST_FIRST = List.of("automations", "training", "inference", "datasets", "tinker",
            "runs", "artifacts", "accounts", "wandb", "events");
    static final long SEED = 43;
    /** Operations of the datasets contract whose bodies hold recursive filters (see config). */
    static final List<String> RECURSIVE_QUERIES = List.of("/calls/query_stats", "/calls/stream_query",
            "/feedback/query", "/feedback/purge");
    /** What a DELETE names instead of the world, so that no deletion takes away what later requests name. */
    static final String ABSENT = "schemathesis-absent";

    /** A name of nothing of the same form as the world's {@code value} (a number, a secret's upper-case name). */
    static String absent(String value) {
        return value.matches("\\d+") ? "999999999"
                : value.matches("[A-Z_][A-Z0-9_]*") ? ABSENT.toUpperCase().replace('-', '_') : ABSENT;
    }

    /**
     * {@code -Dschemathesis.contracts=automations,artifacts}: only those (the GraphQL schema is "graphql");
     * {@code -Dschemathesis.checks=...} other checks of the contracts than {@link #CHECKS}.
     */
    static final Predicate<String> ONLY = contract -> System.getProperty("schemathesis.contracts", "").isBlank()
            || List.of(System.getProperty("schemathesis.contracts").split(",")).contains(contract);
    private static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;
    private static final Path HOME = Path.of("target", "schemathesis");

    @TestHTTPResource("/")
    URI base;

    @Test
    void everyContractPassesSchemathesis() throws Exception {
        Path python = PythonClients.python("schemathesis/requirements.txt");
        Map<String, String> world = SeededWorld.make("st");
        world.remove("registry automation"); // not a path parameter's name
        Files.createDirectories(HOME);
        Path config = HOME.resolve("schemathesis.toml").toAbsolutePath();
        Files.writeString(config, config(world));
        try (Stream<Path> files = Files.list(Path.of("openapi"))) {
            assertEquals(
                    Stream.concat(CONTRACTS.stream().map(name -> name + ".yaml"), Stream.of("wandb.graphql")).sorted()
                            .toList(),
                    files.map(file -> file.getFileName().toString()).sorted().toList(),
                    "every document of openapi/ is run");
        }
        String origin = base.toString().replaceAll("/$", "");
        String checks = System.getProperty("schemathesis.checks", CHECKS);
        // the longest runs first, two at a time (each Schemathesis process keeps one core busy between answers)
        Map<String, List<String>> runs = new LinkedHashMap<>();
        CONTRACTS.stream().filter(ONLY).sorted(Comparator.comparingInt(LONGEST_FIRST::indexOf))
                .forEach(contract -> runs.put(contract, List.of(checks, origin + "/openapi/" + contract + ".yaml")));
        if (ONLY.test("graphql")) {
            // the W&B protocol's GraphQL: the schema file, since the server answers no introspection
            runs.put("graphql", List.of("graphql_no_server_failure", "--url", origin + "/graphql",
                    Path.of("openapi", "wandb.graphql").toAbsolutePath().toString()));
        }
        long started = System.nanoTime();
        ExecutorService streams = Executors.newFixedThreadPool(STREAMS);
        Map<String, Future<Outcome>> outcomes = new LinkedHashMap<>();
        try {
            runs.forEach((name, args) -> outcomes.put(name, streams.submit(() -> run(python, config, name, args))));
            List<String> failed = new ArrayList<>();
            StringBuilder report = new StringBuilder();
            for (Map.Entry<String, Future<Outcome>> entry : outcomes.entrySet()) {
                Outcome outcome = entry.getValue().get();
                report.append(String.format("%s: %.1f s%n", entry.getKey(), outcome.seconds()));
                if (outcome.failure() != null) {
                    failed.add(entry.getKey() + ":\n" + outcome.failure());
                }
            }
            report.append(String.format("Schemathesis in all (%d at a time): %.1f s%n", STREAMS,
                    (System.nanoTime() - started) / 1e9));
            System.out.println(report);
            Files.writeString(HOME.resolve("times.txt"), report);
            assertEquals(List.of(), failed);
        } finally {
            streams.shutdownNow();
        }
    }

    /** How one run of Schemathesis ended: its output when it failed (else null), and how long it took. */
    record Outcome(String failure, double seconds) {
    }

    /**
     * Runs Schemathesis with these checks and then these arguments; its JUnit report (each operation's time) goes to
     * target/schemathesis/NAME.xml, its output to NAME.log.
     */
    private static Outcome run(Path python, Path config, String name, List<String> checksAndArgs)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        List<String> command = new ArrayList<>(List.of(python.toString(), "-m", "schemathesis.cli", "--config-file",
                config.toString(), "run", "--header", "Authorization: Bearer " + ADMIN, "--checks",
                checksAndArgs.get(0), "--max-examples", String.valueOf(MAX_EXAMPLES), "--seed", String.valueOf(SEED),
                "--workers", "1", "--generation-database", "none", "--no-color", "--report", "junit",
                "--report-junit-path", HOME.resolve(name + ".xml").toAbsolutePath().toString()));
        command.addAll(checksAndArgs.subList(1, checksAndArgs.size()));
        File log = HOME.resolve(name + ".log").toFile(); // kept: its statistics of each phase
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
        boolean ended = process.waitFor(5, TimeUnit.MINUTES);
        if (!ended) {
            process.destroyForcibly().waitFor();
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        double seconds = (System.nanoTime() - started) / 1e9;
        if (!ended) {
            return new Outcome("did not end in 5 minutes:\n" + output, seconds);
        }
        return new Outcome(process.exitValue() == 0 ? null : output, seconds);
    }

    /**
     * The configuration: the world's names for the path parameters; a DELETE gets names of nothing (it answers 404,
     * which every deletion documents) so that it takes nothing away from the operations run after it.
     */
    private static String config(Map<String, String> world) {
        StringBuilder toml = new StringBuilder("hooks = \"")
                .append(Path.of("src", "test", "python", "schemathesis", "hooks.py").toAbsolutePath())
                .append("\"\n\n# no state kept between runs (.schemathesis/ in the working directory): each run is the seed's alone\n[cache]\nenabled = false\n\n[parameters]\n");
        // a worker's claim waits up to `wait` seconds for work: longer than a request may take here
        toml.append("\"query.wait\" = 0\n");
        world.forEach(
                (name, value) -> toml.append("\"path.").append(name).append("\" = \"").append(value).append("\"\n"));
        // the system check answers 503 while a queue has no worker (the test's GPU queue has none): its documented
        // "not ready", checked by status_code_conformance and response_schema_conformance, not a failure
        toml.append("\n[[operations]]\ninclude-path = \"/v1/system-check\"\n").append(
                "[operations.checks.not_a_server_error]\nexpected-statuses = [\"2XX\", \"3XX\", \"4XX\", 503]\n");
        // a catalog model Schemathesis adds itself (a gguf model of a made-up file) answers the gateway's documented
        // 503 model_unavailable, as a configured model whose file is missing does: not a failure of the server
        for (String gateway : List.of("/v1/chat/completions", "/v1/chat/completions/", "/v1/completions",
                "/v1/embeddings", "/v1/responses")) {
            toml.append("\n[[operations]]\ninclude-path = \"").append(gateway).append("\"\n").append(
                    "[operations.checks.not_a_server_error]\nexpected-statuses = [\"2XX\", \"3XX\", \"4XX\", 503]\n");
        }
        // the Weave queries' filters are recursive: the coverage phase, which makes every case their schemas define,
        // took 55 of the datasets run's 69 s on them; they keep the fuzzing and stateful phases (which check every
        // answer against the contract), HostileInputTest's bad values for their fields and WeaveCallsApiTest's filters
        for (String query : RECURSIVE_QUERIES) {
            toml.append("\n[[operations]]\ninclude-path = \"").append(query).append("\"\n")
                    .append("[operations.phases.coverage]\nenabled = false\n");
        }
        toml.append("\n[[operations]]\ninclude-method = \"DELETE\"\n[operations.parameters]\n");
        world.forEach((name, value) -> toml.append("\"path.").append(name).append("\" = \"").append(absent(value))
                .append("\"\n"));
        return toml.toString();
    }
}

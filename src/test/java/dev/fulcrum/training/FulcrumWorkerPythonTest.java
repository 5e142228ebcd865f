package dev.fulcrum.training;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.fulcrum.support.NodeScripts;

/**
 * The Python worker's own tests ({@code worker/tests}, pytest) and the lint and format checks (ruff) of every Python
 * file of the repository (the worker's, the clients' test scripts and the benchmarks'), in the worker's venv
 * ({@code worker/.venv}, made from the pinned {@code worker/pyproject.toml} when missing or stale), so the README's
 * test command runs them. Fails with pytest's or ruff's output.
 */
class FulcrumWorkerPythonTest {

    @BeforeAll
    static void venv() throws Exception {
        FulcrumWorkerProcess.prepare();
    }

    @Test
    void pytestPasses() throws Exception {
        String output = NodeScripts.run(FulcrumWorkerProcess.WORKER, Duration.ofMinutes(10), Map.of(),
                ".venv/bin/python", "-m", "pytest", "-p", "no:cacheprovider");
        System.out.println("fulcrum-worker pytest: "
                + output.lines().filter(l -> l.contains("passed")).findFirst().orElse(output));
        assertTrue(output.contains(" passed"), output);
    }

    @Test
    void ruffFindsNothingToLintOrFormat() throws Exception {
        NodeScripts.run(FulcrumWorkerProcess.WORKER, Duration.ofMinutes(2), Map.of(), ".venv/bin/ruff", "check",
                "--no-cache", ".");
        NodeScripts.run(FulcrumWorkerProcess.WORKER, Duration.ofMinutes(2), Map.of(), ".venv/bin/ruff", "format",
                "--check", "--no-cache", ".");
    }

    /**
     * The clients' test scripts, the benchmarks' and the scripts' Python are held to the worker's rules (its
     * pyproject.toml).
     */
    @Test
    void ruffFindsNothingToLintOrFormatInTheClientScriptsAndBenchmarks() throws Exception {
        // from the repository's root, as a developer runs it: `worker/.venv/bin/ruff check --config
        // worker/pyproject.toml src/test/python bench scripts` (and `format --check`)
        for (String command : new String[] { "check", "format" }) {
            NodeScripts.run(FulcrumWorkerProcess.WORKER.toAbsolutePath().getParent(), Duration.ofMinutes(2), Map.of(),
                    "worker/.venv/bin/ruff", command, "--no-cache", "--config", "worker/pyproject.toml",
                    command.equals("format") ? "--check" : "--quiet", "src/test/python", "bench", "scripts");
        }
    }
}

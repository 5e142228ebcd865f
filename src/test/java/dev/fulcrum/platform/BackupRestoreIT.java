package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import dev.fulcrum.artifacts.S3ProxyResource;
import dev.fulcrum.support.BackupArchive;
import dev.fulcrum.support.PackagedJar;

/**
 * A backup taken while Fulcrum serves writes, restored into a fresh place by {@code fulcrum.restore.from}: with the
 * embedded database and the file blob store (the master key file copied, as docs/deployment.md says), and with an
 * external PostgreSQL and S3 (restored into another database and another prefix of the bucket). The restored server's
 * own backup holds exactly the rows of the first (the restore's own record aside) and the same blobs; every dataset
 * acknowledged before the backup began reads back; every artifact version the restored server lists downloads with the
 * bytes that were uploaded, so no row of the snapshot names a blob the archive lacks.
 */
class BackupRestoreIT {

    private static final Duration READY_WITHIN = Duration.ofSeconds(120);
    private static final String KEY = "fk_it-backup-key-0123456789";
    private static final String ARTIFACTS = "/api/v1/entities/admin/projects/it/artifacts/collections/load";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void embeddedDatabaseAndFileBlobs() throws Exception {
        try (PackagedRuns source = new PackagedRuns("backup-it-embedded");
                PackagedRuns target = new PackagedRuns("backup-it-embedded-restored")) {
            Path archive = backUpUnderLoad(source, Map.of());
            Path key = Files.copy(source.dataDir().resolve("secrets").resolve("master.key"),
                    archive.resolveSibling("master.key"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.createDirectories(target.dataDir().resolve("secrets"));
            Files.copy(key, target.dataDir().resolve("secrets").resolve("master.key"));
            restoreAndCompare(target, Map.of(), archive);
            refusesWithoutItsKeyOrWhenCutShort(archive);
        }
    }

    /**
     * A restore with another master key, or from an archive cut short, stops the start with one line saying why (the
     * two starts at once: each is a start of the JVM and of an embedded PostgreSQL, most of their time).
     */
    private void refusesWithoutItsKeyOrWhenCutShort(Path archive) throws Exception {
        Path cut = archive.resolveSibling("cut.tar");
        try (InputStream in = Files.newInputStream(archive)) {
            Files.write(cut, in.readNBytes((int) Math.min(Files.size(archive) / 2, Integer.MAX_VALUE - 8)));
        }
        try (PackagedRuns otherKey = new PackagedRuns("backup-it-other-key");
                PackagedRuns cutShort = new PackagedRuns("backup-it-cut-short")) {
            Files.createDirectories(cutShort.dataDir().resolve("secrets"));
            Files.copy(archive.resolveSibling("master.key"),
                    cutShort.dataDir().resolve("secrets").resolve("master.key"));
            Process withOtherKey = startRestoring(otherKey, archive);
            Process fromCut = startRestoring(cutShort, cut);
            assertRefused(otherKey, withOtherKey, "it was made with another master key");
            assertRefused(cutShort, fromCut, "it could not be read");
        }
    }

    private Process startRestoring(PackagedRuns runs, Path archive) throws IOException {
        return start(runs, Map.of("FULCRUM_RESTORE_FROM", archive.toAbsolutePath().toString()));
    }

    private void assertRefused(PackagedRuns runs, Process refused, String why) throws Exception {
        assertTrue(refused.waitFor(READY_WITHIN.toSeconds(), TimeUnit.SECONDS), "a refused restore stops the start");
        assertTrue(refused.exitValue() != 0, "and exits with an error");
        String log = runs.lastLog();
        assertTrue(
                log.lines().anyMatch(
                        line -> line.contains("ERROR") && line.contains("Not restoring") && line.contains(why)),
                "one ERROR line says why (" + why + "):\n" + log);
    }

    @Test
    void externalDatabaseAndS3() throws Exception {
        S3ProxyResource s3 = new S3ProxyResource();
        try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
                PackagedRuns source = new PackagedRuns("backup-it-external");
                PackagedRuns target = new PackagedRuns("backup-it-external-restored")) {
            try (Connection connection = DriverManager.getConnection(postgres.getJdbcUrl("postgres", "postgres"),
                    "postgres", "postgres");
                    Statement statement = connection.createStatement()) {
                statement.execute("create database source");
                statement.execute("create database restored");
            }
            Map<String, String> shared = new HashMap<>();
            s3.start().forEach((name, value) -> shared.put(variable(name), value));
            byte[] master = new byte[32];
            new Random(43).nextBytes(master);
            shared.put("FULCRUM_SECRETS_MASTER_KEY", Base64.getEncoder().encodeToString(master));
            shared.put("QUARKUS_DATASOURCE_USERNAME", "postgres");
            shared.put("QUARKUS_DATASOURCE_PASSWORD", "postgres");
            Map<String, String> from = new HashMap<>(shared);
            from.put("QUARKUS_DATASOURCE_JDBC_URL", postgres.getJdbcUrl("postgres", "source"));
            Path archive = backUpUnderLoad(source, from);
            Map<String, String> to = new HashMap<>(shared);
            to.put("QUARKUS_DATASOURCE_JDBC_URL", postgres.getJdbcUrl("postgres", "restored"));
            to.put("FULCRUM_ARTIFACTS_S3_PREFIX", "restored/");
            restoreAndCompare(target, to, archive);
        } finally {
            s3.stop();
        }
    }

    /** What the writers were told was stored: datasets (name to digest) and artifact files (version to SHA-256). */
    private record Written(Map<String, String> datasets, Map<String, String> files) {
    }

    private Written written;
    private List<String> ackedBeforeBackup;

    private Path backUpUnderLoad(PackagedRuns source, Map<String, String> environment) throws Exception {
        Process server = start(source, environment);
        source.await200(server, "/q/health/ready", READY_WITHIN, http);
        written = new Written(new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger next = new AtomicInteger();
        ExecutorService writers = Executors.newFixedThreadPool(2);
        List<Future<?>> running = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            running.add(writers.submit(() -> {
                while (!stop.get()) {
                    write(source, next.getAndIncrement());
                }
                return null;
            }));
        }
        try {
            while (written.datasets().size() < 6 || written.files().size() < 6) {
                assertTrue(running.stream().noneMatch(Future::isDone), "the writers run until stopped");
                Thread.sleep(100);
            }
            ackedBeforeBackup = List.copyOf(written.datasets().keySet());
            Path archive = source.logs().resolve("backup.tar");
            HttpResponse<Path> backup = http.send(request(source, "/api/v1/admin/backup").build(),
                    HttpResponse.BodyHandlers.ofFile(archive));
            assertEquals(200, backup.statusCode());
            Thread.sleep(500); // writes after the backup, which the restored server must not have
            return archive;
        } finally {
            stop.set(true);
            for (Future<?> writer : running) {
                writer.get(60, TimeUnit.SECONDS); // a writer's failure fails the test
            }
            writers.shutdown();
            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS));
        }
    }

    /** One write: a dataset and an artifact version with a file of its own bytes. */
    private void write(PackagedRuns source, int n) throws Exception {
        String name = "load-" + n;
        HttpResponse<String> dataset = http.send(
                request(source, "/v2/admin/it/datasets").header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers
                                .ofString("{\"name\":\"" + name + "\",\"rows\":[{\"n\":" + n + "}]}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, dataset.statusCode(), dataset.body());
        JsonNode stored = json.readTree(dataset.body());
        written.datasets().put(stored.get("object_id").asText(), stored.get("digest").asText());

        byte[] content = new byte[32 * 1024 + n];
        new Random(n).nextBytes(content);
        String boundary = "fulcrum-it-" + n;
        byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\ndataset\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"data.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> version = http.send(
                request(source, ARTIFACTS + "/versions")
                        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                        .POST(HttpRequest.BodyPublishers.ofByteArrays(List.of(head, content, tail))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(201, version.statusCode(), version.body());
        written.files().put(json.readTree(version.body()).get("version").asText(), sha256(content));
    }

    private void restoreAndCompare(PackagedRuns target, Map<String, String> environment, Path archive)
            throws Exception {
        Map<String, String> restoring = new HashMap<>(environment);
        restoring.put("FULCRUM_RESTORE_FROM", archive.toAbsolutePath().toString());
        Process server = start(target, restoring);
        target.await200(server, "/q/health/ready", READY_WITHIN, http);

        BackupArchive before;
        try (InputStream in = Files.newInputStream(archive)) {
            before = BackupArchive.read(in);
        }
        HttpResponse<InputStream> again = http.send(request(target, "/api/v1/admin/backup").build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, again.statusCode());
        BackupArchive after = BackupArchive.read(again.body());

        assertEquals(before.manifest().schemaVersion(), after.manifest().schemaVersion());
        for (var table : before.manifest().tables()) {
            List<String> expected = before.rows(table.name());
            List<String> restored = after.rows(table.name());
            if (table.name().equals("api_keys")) { // the backup request itself marks its key used
                expected = before.rowsWithout(table.name(), "last_used_at");
                restored = after.rowsWithout(table.name(), "last_used_at");
            }
            assertEquals(List.of(), without(expected, restored), "every row of " + table.name() + " is restored");
            // the restored server's own rows: the record of this restore, and its built-in executor's registration
            // (made at the executor's first poll, up to a poll interval after the server is ready: there or not yet)
            int own = without(restored, expected).size();
            if (table.name().equals("training_workers")) {
                assertTrue(own <= 1, "rows of training_workers besides the backup's: " + own);
            } else {
                assertEquals(table.name().equals("restored_backups") ? 1 : 0, own,
                        "rows of " + table.name() + " besides the backup's");
            }
        }
        assertEquals(before.blobs(), after.blobs(), "the restored store holds exactly the archive's blobs");

        for (String name : ackedBeforeBackup) {
            HttpResponse<String> read = http
                    .send(request(target, "/v2/admin/it/datasets/" + name + "/versions/" + written.datasets().get(name))
                            .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, read.statusCode(), name + " was acknowledged before the backup: " + read.body());
        }
        JsonNode versions = json.readTree(http
                .send(request(target, ARTIFACTS + "/versions?limit=1000").build(), HttpResponse.BodyHandlers.ofString())
                .body());
        int listed = 0;
        for (JsonNode version : versions.get("versions")) {
            String name = version.get("version").asText();
            HttpResponse<byte[]> file = http.send(
                    request(target, ARTIFACTS + "/versions/" + name + "/download?path=data.bin").build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, file.statusCode(), name + " is listed, so its file downloads");
            assertEquals(written.files().get(name), sha256(file.body()), "the bytes uploaded as " + name);
            listed++;
        }
        assertTrue(listed >= 6, "the versions written before the backup are there: " + listed);
        assertTrue(listed < written.files().size(),
                "writes after the snapshot are not: " + listed + " of " + written.files().size());

        server.destroy();
        assertTrue(server.waitFor(30, TimeUnit.SECONDS));
        Process restarted = start(target, restoring);
        target.await200(restarted, "/q/health/ready", READY_WITHIN, http);
        assertTrue(target.lastLog().contains("was restored into this database before"),
                "a start with the setting left finds the restore done");
    }

    /** The rows of {@code rows} that {@code taken} does not account for, counting repeats. */
    private static List<String> without(List<String> rows, List<String> taken) {
        Map<String, Integer> left = new HashMap<>();
        taken.forEach(row -> left.merge(row, 1, Integer::sum));
        List<String> rest = new ArrayList<>();
        for (String row : rows) {
            if (left.merge(row, -1, Integer::sum) < 0) {
                rest.add(row);
            }
        }
        return rest;
    }

    private Process start(PackagedRuns runs, Map<String, String> environment) throws IOException {
        Map<String, String> env = new HashMap<>(environment);
        env.put("FULCRUM_BOOTSTRAP_API_KEY", KEY);
        return runs.start(PackagedJar.command("-Xmx384m"), env);
    }

    private static HttpRequest.Builder request(PackagedRuns runs, String path) {
        return HttpRequest.newBuilder(runs.uri(path)).timeout(Duration.ofSeconds(60)).header("Authorization",
                "Bearer " + KEY);
    }

    private static String variable(String property) {
        return property.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}

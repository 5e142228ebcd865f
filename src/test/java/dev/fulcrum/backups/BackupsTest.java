package dev.fulcrum.backups;

import static dev.fulcrum.support.Management.PROBLEM_JSON;
import static dev.fulcrum.support.Management.anonymous;
import static dev.fulcrum.support.Management.as;
import static dev.fulcrum.support.Management.asAdmin;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.artifacts.BlobCollector;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.support.BackupArchive;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.PrometheusText;

/**
 * {@code GET /api/v1/admin/backup}: server administrators only, answered as the contract says, an archive that holds
 * the tables in an order a restore can load and every blob; the blob collector removes nothing while a backup runs.
 * (Restoring it, under load, on both kinds of storage: {@code platform/BackupRestoreIT}.)
 */
@QuarkusTest
class BackupsTest {

    @Inject
    Fixtures fixtures;

    @Inject
    Backups backups;

    @Inject
    BlobStore blobs;

    @Inject
    BlobCollector collector;

    @Inject
    DataSource dataSource;

    @Test
    void onlyServerAdministratorsDownloadABackup() {
        anonymous().when().get("/api/v1/admin/backup").then().statusCode(401).contentType(PROBLEM_JSON);
        as(fixtures.user("backup-reader")).when().get("/api/v1/admin/backup").then().statusCode(403)
                .contentType(PROBLEM_JSON).body("status", equalTo(403));
    }

    /** Each archive counts on the metrics page, with when the last was written: an alert sees a backup missing. */
    @Test
    void aWrittenArchiveCountsAndSaysWhenOnTheMetricsPage() {
        double written = PrometheusText.fetch().sum("fulcrum_backups_total", Map.of("outcome", "written"));
        double failed = PrometheusText.fetch().sum("fulcrum_backups_total", Map.of("outcome", "failed"));
        long before = Instant.now().getEpochSecond();
        asAdmin().when().get("/api/v1/admin/backup").then().statusCode(200);
        // counted once the archive's stream ended, which the client may see first
        await().atMost(Duration.ofSeconds(10)).until(
                () -> PrometheusText.fetch().sum("fulcrum_backups_total", Map.of("outcome", "written")) == written + 1);
        PrometheusText after = PrometheusText.fetch();
        assertEquals(failed, after.sum("fulcrum_backups_total", Map.of("outcome", "failed")));
        assertTrue(after.sum("fulcrum_backup_last_written_timestamp_seconds", Map.of()) >= before);
        assertTrue(after.sum("fulcrum_backup_duration_seconds_count", Map.of()) >= 1);
    }

    @Test
    void theArchiveHoldsTheManifestEveryBlobAndEveryTableInLoadingOrder() throws Exception {
        String name = Fixtures.unique("backup-rows");
        asAdmin().body(Map.of("username", name)).when().post("/api/v1/users").then().statusCode(201);
        BlobStore.Blob blob = blobs.put(new ByteArrayInputStream(name.getBytes(StandardCharsets.UTF_8)), 1 << 20);

        byte[] archive = asAdmin().when().get("/api/v1/admin/backup").then().statusCode(200)
                .contentType("application/x-tar")
                .header("Content-Disposition",
                        matchesPattern("attachment; filename=\"fulcrum-backup-\\d{8}T\\d{6}Z\\.tar\""))
                .extract().asByteArray();
        BackupArchive read = BackupArchive.read(new ByteArrayInputStream(archive));

        BackupManifest manifest = read.manifest();
        assertEquals(BackupManifest.FORMAT, manifest.format());
        String latest = NativeSql
                .pooled(dataSource,
                        connection -> NativeSql.first(connection,
                                "select cast(max(cast(version as int)) as text) from flyway_schema_history",
                                row -> row.string(0)).orElseThrow());
        assertEquals(latest, manifest.schemaVersion());
        List<String> tables = manifest.tables().stream().map(BackupManifest.Table::name).toList();
        assertTrue(tables.indexOf("users") < tables.indexOf("api_keys"), "a key's user is loaded first: " + tables);
        assertTrue(tables.indexOf("entities") < tables.indexOf("projects"), tables.toString());
        assertTrue(!tables.contains("flyway_schema_history"), "a restore migrates; the history is not copied");
        assertTrue(
                read.rows("users").stream()
                        .anyMatch(row -> row.contains(HexFormat.of().formatHex(name.getBytes(StandardCharsets.UTF_8)))),
                "the new user is in the archive");
        assertEquals(manifest.blobs(), read.blobs().size());
        assertTrue(read.blobs().contains(blob.digest()), "every blob of the store is in the archive");
        assertEquals(manifest.tables().stream().mapToLong(BackupManifest.Table::rows).sum(),
                manifest.tables().stream().mapToLong(table -> read.rows(table.name()).size()).sum());
    }

    @Test
    void theCollectorRemovesNothingWhileABackupRuns() throws IOException, SQLException {
        BlobStore.Blob unused = blobs.put(new ByteArrayInputStream(Fixtures.unique("unused").getBytes()), 1 << 20);
        try (Backups.Prepared running = backups.prepare()) {
            assertEquals(0, collector.sweep(Duration.ofSeconds(-1)).blobs(), "a backup is reading the store");
            assertTrue(blobs.size(unused.digest()).isPresent());
            running.write(new ByteArrayOutputStream());
        }
        collector.sweep(Duration.ofSeconds(-1));
        assertTrue(blobs.size(unused.digest()).isEmpty(), "after the backup, the unused blob is removed");
    }
}

package dev.fulcrum.platform.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** Above one replica, the settings every replica must share are required, and a missing one is named. */
class ReplicaSettingsTest {

    private static final Optional<String> KEY = Optional.of("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    private static final Optional<Path> PRIVATE = Optional.of(Path.of("/etc/fulcrum/jwt/private-key.pem"));
    private static final Optional<Path> PUBLIC = Optional.of(Path.of("/etc/fulcrum/jwt/public-key.pem"));
    private static final Optional<String> BUCKET = Optional.of("fulcrum-blobs");

    @Test
    void oneReplicaNeedsNothingShared() {
        assertEquals(List.of(), ReplicaSettings.missing(1, false, Optional.empty(), Optional.empty(), Optional.empty(),
                "filesystem", Optional.empty(), Optional.empty()));
    }

    @Test
    void severalReplicasWithEverySharedSettingStart() {
        assertEquals(List.of(), ReplicaSettings.missing(2, true, KEY, PRIVATE, PUBLIC, "s3", BUCKET, Optional.empty()));
        assertEquals(List.of(), ReplicaSettings.missing(3, true, KEY, PRIVATE, PUBLIC, "filesystem", Optional.empty(),
                Optional.of(Path.of("/mnt/shared/blobs"))));
    }

    @Test
    void severalReplicasWithNothingSharedNameEverySettingTheyLack() {
        List<String> missing = ReplicaSettings.missing(2, false, Optional.empty(), Optional.empty(), Optional.empty(),
                "filesystem", Optional.empty(), Optional.empty());

        assertEquals(4, missing.size(), missing.toString());
        assertTrue(missing.get(0).contains("quarkus.datasource.jdbc.url"), missing.get(0));
        assertTrue(missing.get(1).contains("fulcrum.secrets.master-key"), missing.get(1));
        assertTrue(missing.get(2).contains("fulcrum.jwt.private-key"), missing.get(2));
        assertTrue(missing.get(3).contains("fulcrum.artifacts.blob-store=s3"), missing.get(3));
    }

    @Test
    void eachSharedSettingIsRequiredOnItsOwn() {
        assertEquals(1, ReplicaSettings.missing(2, false, KEY, PRIVATE, PUBLIC, "s3", BUCKET, Optional.empty()).size());
        assertEquals(1, ReplicaSettings
                .missing(2, true, Optional.of(" "), PRIVATE, PUBLIC, "s3", BUCKET, Optional.empty()).size());
        assertEquals(1, ReplicaSettings.missing(2, true, KEY, PRIVATE, Optional.empty(), "s3", BUCKET, Optional.empty())
                .size());
        assertEquals(List.of("fulcrum.artifacts.s3.bucket (FULCRUM_ARTIFACTS_S3_BUCKET)"),
                ReplicaSettings.missing(2, true, KEY, PRIVATE, PUBLIC, "s3", Optional.empty(), Optional.empty()));
    }
}

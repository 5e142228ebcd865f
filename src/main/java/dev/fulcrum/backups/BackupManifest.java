package dev.fulcrum.backups;

import java.io.IOException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The first entry of a backup archive ({@value #ENTRY}): what the archive holds, in the order it holds it. After it
 * come the blobs ({@code blobs/<digest>}), then the tables ({@code tables/<name>.copy}, PostgreSQL's binary
 * {@code COPY} of the listed columns), in the order of {@link #tables}: a row's references come before it. Read and
 * written by Jackson, so registered for reflection (the native image).
 *
 * @param format
 *            the archive's layout, {@value #FORMAT}
 * @param schemaVersion
 *            the last migration the database had when the snapshot was taken
 * @param keyCheck
 *            a value sealed with the master key ({@link #keyCheckText}), base64: a restore opens it to know that its
 *            key opens the sealed values of the tables
 */
@RegisterForReflection
public record BackupManifest(int format, UUID id, OffsetDateTime madeAt, String schemaVersion, String keyCheck,
        List<Table> tables, List<Sequence> sequences, long blobs, long blobBytes) {

    public static final String ENTRY = "fulcrum-backup.json";
    public static final int FORMAT = 1;
    /** The context of the sealed key check. */
    static final String KEY_CHECK_CONTEXT = "fulcrum-backup";

    /** One table: its columns as copied (not generated ones), and its rows. */
    @RegisterForReflection
    public record Table(String name, List<String> columns, long rows) {

        public String entry() {
            return "tables/" + name + ".copy";
        }
    }

    /** One sequence's state, as {@code setval(name, lastValue, isCalled)} restores it. */
    @RegisterForReflection
    public record Sequence(String name, long lastValue, boolean isCalled) {
    }

    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** This manifest, with the blobs listed after the snapshot. */
    BackupManifest withBlobs(long count, long bytes) {
        return new BackupManifest(format, id, madeAt, schemaVersion, keyCheck, tables, sequences, count, bytes);
    }

    static String keyCheckText(UUID id) {
        return "backup " + id;
    }

    public static String blobEntry(String digest) {
        return "blobs/" + digest;
    }

    byte[] json() {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(this);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static BackupManifest read(byte[] json) throws IOException {
        return JSON.readValue(json, BackupManifest.class);
    }
}

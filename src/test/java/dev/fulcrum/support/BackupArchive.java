package dev.fulcrum.support;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

import dev.fulcrum.backups.BackupManifest;

/**
 * A backup archive read back by a test: its manifest, each table's rows (decoded from PostgreSQL's binary {@code COPY}:
 * each row as its fields' bytes in hex, with NULL marked, so rows compare as values), and the digests of its blobs,
 * each checked to be the SHA-256 of its bytes.
 */
public record BackupArchive(BackupManifest manifest, Map<String, List<String>> tables, Set<String> blobs) {

    private static final byte[] SIGNATURE = { 'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0 };

    public List<String> rows(String table) {
        return tables.getOrDefault(table, List.of());
    }

    /** The rows of {@code table} with {@code column}'s value left out (as {@code ·}), sorted. */
    public List<String> rowsWithout(String table, String column) {
        int index = manifest.tables().stream().filter(listed -> listed.name().equals(table)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no table " + table)).columns().indexOf(column);
        if (index < 0) {
            throw new IllegalArgumentException(table + " has no column " + column);
        }
        return rows(table).stream().map(row -> {
            String[] fields = row.split("\\|", -1);
            fields[index] = "·";
            return String.join("|", fields);
        }).sorted().toList();
    }

    public static BackupArchive read(InputStream in) throws IOException {
        BackupManifest manifest = null;
        Map<String, List<String>> tables = new HashMap<>();
        Set<String> blobs = new TreeSet<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(in)) {
            for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                byte[] bytes = tar.readAllBytes();
                String name = entry.getName();
                if (name.equals(BackupManifest.ENTRY)) {
                    manifest = BackupManifest.read(bytes);
                } else if (name.startsWith("blobs/")) {
                    String digest = name.substring("blobs/".length());
                    if (!digest.equals(sha256(bytes))) {
                        throw new IOException("blob " + digest + " holds other bytes");
                    }
                    blobs.add(digest);
                } else if (name.startsWith("tables/") && name.endsWith(".copy")) {
                    tables.put(name.substring("tables/".length(), name.length() - ".copy".length()), rows(bytes));
                } else {
                    throw new IOException("unexpected entry " + name);
                }
            }
        }
        if (manifest == null) {
            throw new IOException("no " + BackupManifest.ENTRY);
        }
        return new BackupArchive(manifest, tables, blobs);
    }

    /** The rows of a binary COPY, each its fields' hex joined by {@code |}, NULL as {@code ∅}, sorted. */
    private static List<String> rows(byte[] copy) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(copy));
        byte[] signature = in.readNBytes(SIGNATURE.length);
        if (!java.util.Arrays.equals(SIGNATURE, signature)) {
            throw new IOException("not a binary COPY");
        }
        in.readInt(); // flags
        in.skipNBytes(in.readInt()); // header extension
        List<String> rows = new ArrayList<>();
        HexFormat hex = HexFormat.of();
        for (short fields = in.readShort(); fields != -1; fields = in.readShort()) {
            StringBuilder row = new StringBuilder();
            for (int i = 0; i < fields; i++) {
                int length = in.readInt();
                row.append(i == 0 ? "" : "|").append(length < 0 ? "∅" : hex.formatHex(in.readNBytes(length)));
            }
            rows.add(row.toString());
        }
        rows.sort(null);
        return rows;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

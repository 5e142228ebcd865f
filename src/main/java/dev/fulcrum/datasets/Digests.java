package dev.fulcrum.datasets;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/** Weave's digests: of a JSON text (rows, objects) and of a table (its row digests in order). */
public final class Digests {

    private Digests() {
    }

    /** URL-safe base64 of the SHA-256 of the text, {@code -} as {@code X}, {@code _} as {@code Y}, no padding. */
    public static String ofText(String canonicalJson) {
        return ofBytes(canonicalJson.getBytes(StandardCharsets.UTF_8));
    }

    /** The same function over bytes (a file's content). */
    public static String ofBytes(byte[] bytes) {
        byte[] hash = sha256().digest(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(hash).replace('-', 'X').replace('_', 'Y');
    }

    /** Lowercase hex SHA-256 over the row digests, concatenated in order. */
    public static String ofTable(List<String> rowDigests) {
        MessageDigest sha256 = sha256();
        for (String digest : rowDigests) {
            sha256.update(digest.getBytes(StandardCharsets.US_ASCII));
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

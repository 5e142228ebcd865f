package dev.fulcrum.platform;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;

import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * Encryption at rest for secret values (team secrets, upstream API keys, webhook bodies that carry secrets):
 * AES-256-GCM with a random 96-bit nonce per value. The master key is {@code fulcrum.secrets.master-key} (base64 of 32
 * bytes) or, when absent, a key generated once into {@code ${fulcrum.data-dir}/secrets/master.key} with permissions
 * 0600.
 * <p>
 * A sealed value is {@code version(1) || nonce(12) || ciphertext+tag}. The {@code context} (for example
 * {@code "team-secret:42:TOKEN"}) is bound as associated data, so a sealed value copied to another row does not open.
 */
@ApplicationScoped
public class SecretCipher {

    private static final byte VERSION = 1;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final int KEY_BYTES = 32;

    private final SecureRandom random = new SecureRandom();

    @Inject
    FulcrumConfig config;

    private SecretKey key;

    @PostConstruct
    void loadKey() {
        byte[] raw = config.secrets().masterKey().map(encoded -> decodeKey(encoded, "fulcrum.secrets.master-key"))
                .orElseGet(() -> keyFile(config.dataDir().resolve("secrets").resolve("master.key")));
        key = new SecretKeySpec(raw, "AES");
    }

    /**
     * An HMAC-SHA256 of {@code message} (base64url, unpadded) under a key derived from the master key for
     * {@code context}: what a URL handed to a client carries so that the server, any replica, can check it later.
     */
    public String sign(String context, String message) {
        try {
            javax.crypto.Mac derive = javax.crypto.Mac.getInstance("HmacSHA256");
            derive.init(new SecretKeySpec(key.getEncoded(), "HmacSHA256"));
            byte[] derived = derive.doFinal(("sign:" + context).getBytes(StandardCharsets.UTF_8));
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(derived, "HmacSHA256"));
            return Base64.getUrlEncoder().withoutPadding()
                    .encodeToString(mac.doFinal(message.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether {@code signature} is {@link #sign}'s for {@code context} of {@code message} followed by a space and
     * {@code expires} (Unix seconds), and that time has not passed: the check of a signed URL.
     */
    public boolean signedUntil(String context, String message, long expires, String signature) {
        return signature != null && expires >= Instant.now().getEpochSecond()
                && MessageDigest.isEqual(sign(context, message + " " + expires).getBytes(StandardCharsets.UTF_8),
                        signature.getBytes(StandardCharsets.UTF_8));
    }

    public byte[] seal(String plaintext, String context) {
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        try {
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, nonce, context);
            byte[] sealed = cipher.doFinal(plaintext.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.allocate(1 + NONCE_BYTES + sealed.length).put(VERSION).put(nonce).put(sealed).array();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is unavailable", e);
        }
    }

    /** The plaintext; {@link IllegalStateException} when the value was sealed with another key or context. */
    public String open(byte[] sealed, String context) {
        if (sealed.length < 1 + NONCE_BYTES || sealed[0] != VERSION) {
            throw new IllegalStateException("Not a sealed secret value");
        }
        byte[] nonce = new byte[NONCE_BYTES];
        System.arraycopy(sealed, 1, nonce, 0, NONCE_BYTES);
        try {
            Cipher cipher = cipher(Cipher.DECRYPT_MODE, nonce, context);
            byte[] plain = cipher.doFinal(sealed, 1 + NONCE_BYTES, sealed.length - 1 - NONCE_BYTES);
            return new String(plain, StandardCharsets.UTF_8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("A secret value does not open with the configured master key", e);
        }
    }

    private Cipher cipher(int mode, byte[] nonce, String context) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
        cipher.updateAAD(context.getBytes(StandardCharsets.UTF_8));
        return cipher;
    }

    private byte[] keyFile(Path file) {
        try {
            if (Files.exists(file)) {
                return decodeKey(Files.readString(file, StandardCharsets.US_ASCII).strip(), file.toString());
            }
            byte[] raw = new byte[KEY_BYTES];
            random.nextBytes(raw);
            PrivateFiles.write(file, Base64.getEncoder().encode(raw));
            return raw;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] decodeKey(String encoded, String source) {
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(encoded.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(source + " is not base64", e);
        }
        if (raw.length != KEY_BYTES) {
            throw new IllegalStateException(source + " must hold 32 bytes (base64), it holds " + raw.length);
        }
        return raw;
    }
}

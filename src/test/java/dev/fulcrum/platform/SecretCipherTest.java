package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
class SecretCipherTest {

    @Inject
    SecretCipher cipher;

    @Inject
    FulcrumConfig config;

    @Test
    void sealedValuesOpenOnlyInTheirContext() {
        byte[] sealed = cipher.seal("hunter2 ✓", "team-secret:1:TOKEN");
        assertEquals("hunter2 ✓", cipher.open(sealed, "team-secret:1:TOKEN"));
        assertFalse(new String(sealed, StandardCharsets.ISO_8859_1).contains("hunter2"));
        assertThrows(IllegalStateException.class, () -> cipher.open(sealed, "team-secret:2:TOKEN"));
    }

    @Test
    void eachSealingUsesAFreshNonce() {
        assertFalse(Arrays.equals(cipher.seal("same", "c"), cipher.seal("same", "c")));
    }

    @Test
    void tamperedValuesDoNotOpen() {
        byte[] sealed = cipher.seal("value", "c");
        sealed[sealed.length - 1] ^= 1;
        assertThrows(IllegalStateException.class, () -> cipher.open(sealed, "c"));
        assertThrows(IllegalStateException.class, () -> cipher.open(new byte[] { 1, 2, 3 }, "c"));
    }

    @Test
    void generatedMasterKeyIsPrivateToTheServer() throws Exception {
        cipher.seal("x", "c");
        Path file = config.dataDir().resolve("secrets").resolve("master.key");
        assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(file));
        assertEquals(44, Files.readString(file).strip().length());
    }
}

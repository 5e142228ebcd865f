package dev.fulcrum.accounts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import jakarta.inject.Inject;

import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.build.Jwt;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;

@QuarkusTest
class JwtTokensTest {

    @Inject
    JwtTokens tokens;

    @Inject
    FulcrumConfig config;

    @Test
    void aSignedTokenVerifiesWithItsSubjectAndClaims() {
        String token = tokens.sign("job-42", Map.of("job", "42", "scope", "training"));
        JsonWebToken jwt = tokens.verify(token);
        assertEquals("job-42", jwt.getSubject());
        assertEquals("42", jwt.getClaim("job"));
        assertEquals("training", jwt.getClaim("scope"));
        assertEquals(config.jwt().issuer(), jwt.getIssuer());
    }

    @Test
    void aTamperedTokenIsRefused() {
        String[] parts = tokens.sign("job-1", Map.of("scope", "training")).split("\\.");
        String forged = Base64.getUrlEncoder().withoutPadding()
                .encodeToString(new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8)
                        .replace("job-1", "job-2").getBytes(StandardCharsets.UTF_8));
        assertUnauthorized(parts[0] + "." + forged + "." + parts[2]);
    }

    @Test
    void anExpiredTokenIsRefused() {
        assertUnauthorized(tokens.sign("job-1", Map.of(), Duration.ofSeconds(-5)));
    }

    @Test
    void aTokenSignedWithAnotherKeyIsRefused() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String foreign = Jwt.issuer(config.jwt().issuer()).subject("job-1").expiresIn(Duration.ofMinutes(5))
                .sign(generator.generateKeyPair().getPrivate());
        assertUnauthorized(foreign);
        assertUnauthorized("not.a.token");
    }

    @Test
    void theKeyPairIsPersistedInTheDataDirectoryReadableOnlyByItsOwner() throws Exception {
        String token = tokens.sign("job-7", Map.of());
        Path directory = config.dataDir().resolve("jwt");
        for (String file : new String[] { "private.pem", "public.pem" }) {
            Path pem = directory.resolve(file);
            assertTrue(Files.exists(pem), pem + " exists");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(pem)));
        }
        // a restart loads the same pair: what it reads from disk verifies the tokens signed before
        JWTAuthContextInfo context = new JWTAuthContextInfo(JwtTokens.generatedKeys(directory).getPublic(),
                config.jwt().issuer());
        assertEquals("job-7", new DefaultJWTParser(context).parse(token).getSubject());
    }

    private void assertUnauthorized(String token) {
        ApiException refused = assertThrows(ApiException.class, () -> tokens.verify(token));
        assertEquals(ApiException.Kind.UNAUTHENTICATED, refused.kind());
    }
}

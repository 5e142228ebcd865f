package dev.fulcrum.accounts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.jwt.JsonWebToken;

import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.ParseException;
import io.smallrye.jwt.build.Jwt;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.PrivateFiles;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Short-lived tokens this server signs itself (RS256), such as the job-scoped tokens of training workers. The key pair
 * comes from configuration, or is generated into {@code ${fulcrum.data-dir}/jwt} on first start (0600).
 */
@ApplicationScoped
public class JwtTokens {

    @Inject
    FulcrumConfig config;

    private PrivateKey privateKey;
    private DefaultJWTParser parser;

    @PostConstruct
    void loadKeys() {
        KeyPair keys = config.jwt().privateKey().isPresent() && config.jwt().publicKey().isPresent()
                ? new KeyPair(readPublic(config.jwt().publicKey().get()), readPrivate(config.jwt().privateKey().get()))
                : generatedKeys(config.dataDir().resolve("jwt"));
        privateKey = keys.getPrivate();
        JWTAuthContextInfo context = new JWTAuthContextInfo(keys.getPublic(), config.jwt().issuer());
        context.setExpGracePeriodSecs(0);
        parser = new DefaultJWTParser(context);
    }

    /** Signs a token for {@code subject} with extra claims, valid for the configured lifetime. */
    public String sign(String subject, Map<String, Object> claims) {
        return sign(subject, claims, config.jwt().lifetime());
    }

    public String sign(String subject, Map<String, Object> claims, Duration lifetime) {
        var builder = Jwt.issuer(config.jwt().issuer()).subject(subject).expiresIn(lifetime);
        claims.forEach(builder::claim);
        return builder.sign(privateKey);
    }

    /** The verified token; 401 if its signature, issuer or expiry is wrong. */
    public JsonWebToken verify(String token) {
        try {
            return parser.parse(token);
        } catch (ParseException e) {
            throw ApiException.unauthorized("Invalid or expired token");
        }
    }

    static KeyPair generatedKeys(Path directory) {
        Path privatePem = directory.resolve("private.pem");
        Path publicPem = directory.resolve("public.pem");
        try {
            if (Files.exists(privatePem) && Files.exists(publicPem)) {
                return new KeyPair(readPublic(publicPem), readPrivate(privatePem));
            }
            Files.createDirectories(directory);
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            KeyPair keys = generator.generateKeyPair();
            writePem(publicPem, "PUBLIC KEY", keys.getPublic().getEncoded());
            writePem(privatePem, "PRIVATE KEY", keys.getPrivate().getEncoded());
            return keys;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void writePem(Path file, String type, byte[] der) throws IOException {
        String pem = "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
        PrivateFiles.write(file, pem.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] readPem(Path file) {
        try {
            String pem = Files.readString(file, StandardCharsets.US_ASCII);
            return Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static PrivateKey readPrivate(Path file) {
        try {
            return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(readPem(file)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Not an RSA PKCS#8 private key: " + file, e);
        }
    }

    static PublicKey readPublic(Path file) {
        try {
            return KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(readPem(file)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Not an RSA public key: " + file, e);
        }
    }
}

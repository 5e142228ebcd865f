package dev.fulcrum.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A self-signed certificate for {@code localhost}, made with the JDK's {@code keytool} when the test starts, served
 * through Quarkus's TLS registry on a random HTTPS port. {@link #PEM} is the certificate alone, for clients to trust
 * (Node: {@code NODE_EXTRA_CA_CERTS}).
 */
public class TestCertificate implements QuarkusTestResourceLifecycleManager {

    public static final String PEM = "test-certificate.pem-path";
    private static final String PASSWORD = "test-only-password";

    private Path dir;

    @Override
    public Map<String, String> start() {
        try {
            dir = Files.createTempDirectory("fulcrum-tls");
            Path keystore = dir.resolve("server.p12");
            Path pem = dir.resolve("server.pem");
            String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            run(keytool, "-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                    "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-keystore",
                    keystore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
            run(keytool, "-exportcert", "-rfc", "-alias", "server", "-keystore", keystore.toString(), "-storetype",
                    "PKCS12", "-storepass", PASSWORD, "-file", pem.toString());
            return Map.of("quarkus.tls.key-store.p12.path", keystore.toString(), "quarkus.tls.key-store.p12.password",
                    PASSWORD, "quarkus.http.test-ssl-port", "0", PEM, pem.toString());
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("Could not make a test certificate", e);
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
        }
    }

    @Override
    public void stop() {
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                // a temporary directory left behind
            }
        }
    }
}

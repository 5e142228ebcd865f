package dev.fulcrum.artifacts;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.awaitility.core.ConditionTimeoutException;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * S3Proxy (an S3-compatible server with in-memory storage, copied to {@code target/s3proxy/s3proxy.jar} by the build)
 * in its own process, with a bucket for the blob store and Fulcrum configured to use it.
 */
public class S3ProxyResource implements QuarkusTestResourceLifecycleManager {

    static final String BUCKET = "fulcrum-test";
    static final String ACCESS_KEY = "test-access-key";
    static final String SECRET_KEY = "test-secret-key";

    private Process process;
    private static URI endpoint;

    @Override
    public Map<String, String> start() {
        try {
            int port;
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            endpoint = URI.create("http://127.0.0.1:" + port);
            Path properties = Files.createTempFile("s3proxy", ".properties");
            Files.writeString(properties,
                    String.join("\n", "s3proxy.endpoint=" + endpoint, "s3proxy.authorization=aws-v2-or-v4",
                            "s3proxy.identity=" + ACCESS_KEY, "s3proxy.credential=" + SECRET_KEY,
                            "jclouds.provider=transient", "jclouds.identity=unused", "jclouds.credential=unused", ""));
            Path jar = Path.of("target", "s3proxy", "s3proxy.jar");
            if (!Files.exists(jar)) {
                throw new IllegalStateException(jar + " is missing: run the tests through Maven");
            }
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            process = new ProcessBuilder(java, "-Xmx256m", "-jar", jar.toString(), "--properties",
                    properties.toString()).redirectErrorStream(true)
                            .redirectOutput(Files.createTempFile("s3proxy", ".log").toFile()).start();
            awaitPort(port, Duration.ofSeconds(90));
            try (S3Client client = client()) {
                client.createBucket(b -> b.bucket(BUCKET));
            }
            return Map.of("fulcrum.artifacts.blob-store", "s3", "fulcrum.artifacts.s3.endpoint", endpoint.toString(),
                    "fulcrum.artifacts.s3.bucket", BUCKET, "fulcrum.artifacts.s3.access-key-id", ACCESS_KEY,
                    "fulcrum.artifacts.s3.secret-access-key", SECRET_KEY, "fulcrum.artifacts.s3.prefix", "blobs/",
                    // S3's smallest part, so that a small blob is written as a multipart upload
                    "fulcrum.artifacts.s3.part-bytes", Long.toString(S3BlobStoreTest.PART));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A client of the running S3Proxy, to look into the bucket. */
    static S3Client client() {
        return S3Client.builder().endpointOverride(endpoint).region(Region.US_EAST_1).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .httpClientBuilder(UrlConnectionHttpClient.builder()).credentialsProvider(
                        StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .build();
    }

    private void awaitPort(int port, Duration timeout) throws IOException {
        try {
            await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(() -> {
                if (!process.isAlive()) {
                    throw new IOException("S3Proxy exited with " + process.exitValue());
                }
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                    return true;
                } catch (IOException notYet) {
                    return false;
                }
            });
        } catch (ConditionTimeoutException e) {
            throw new IOException("S3Proxy did not listen on port " + port + " within " + timeout, e);
        }
    }

    @Override
    public void stop() {
        if (process != null) {
            process.destroy();
        }
    }
}

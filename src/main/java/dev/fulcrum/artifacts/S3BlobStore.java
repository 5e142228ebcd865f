package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Inject;

import dev.fulcrum.platform.FulcrumConfig;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Blobs as objects of an S3-compatible bucket, under {@code prefix + ab/cd/abcd...}, for replicas that share no
 * filesystem. An upload is first streamed to a local temporary file (its digest names the object, so it must be known
 * before the object is written), then put in one request; S3 makes an object visible only once it is complete. Reads
 * stream ranged GETs.
 */
@ApplicationScoped
@Typed(S3BlobStore.class)
public class S3BlobStore implements BlobStore {

    @Inject
    FulcrumConfig config;

    private S3Client client;
    private String bucket;
    private String prefix;

    @PostConstruct
    void connect() {
        FulcrumConfig.S3 s3 = config.artifacts().s3();
        bucket = s3.bucket().orElseThrow(() -> new IllegalStateException(
                "fulcrum.artifacts.s3.bucket is required when fulcrum.artifacts.blob-store=s3"));
        prefix = s3.prefix().orElse("");
        S3ClientBuilder builder = S3Client.builder().region(Region.of(s3.region())).forcePathStyle(s3.pathStyle())
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                // checksums only where S3 requires them: S3-compatible services reject the SDK's default
                // checksum trailers
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        s3.endpoint().ifPresent(builder::endpointOverride);
        if (s3.accessKeyId().isPresent() && s3.secretAccessKey().isPresent()) {
            builder.credentialsProvider(StaticCredentialsProvider
                    .create(AwsBasicCredentials.create(s3.accessKeyId().get(), s3.secretAccessKey().get())));
        } else {
            builder.credentialsProvider(DefaultCredentialsProvider.builder().build());
        }
        client = builder.build();
    }

    @PreDestroy
    void close() {
        if (client != null) {
            client.close();
        }
    }

    @Override
    public Blob put(InputStream content, long maxBytes) throws IOException {
        Path tmp = config.dataDir().resolve("blobs-upload");
        Files.createDirectories(tmp);
        Path temp = Files.createTempFile(tmp, "upload-", ".part");
        try {
            Blob blob = FileSystemBlobStore.copy(content, temp, maxBytes);
            if (size(blob.digest()).isEmpty()) {
                client.putObject(PutObjectRequest.builder().bucket(bucket).key(key(blob.digest()))
                        .contentLength(blob.size()).build(), RequestBody.fromFile(temp));
            }
            return blob;
        } catch (SdkException e) {
            throw new IOException("Could not store the blob in bucket " + bucket, e);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public Optional<Long> size(String digest) throws IOException {
        try {
            return Optional.of(client.headObject(HeadObjectRequest.builder().bucket(bucket).key(key(digest)).build())
                    .contentLength());
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return Optional.empty();
            }
            throw new IOException("Could not read blob " + digest + " from bucket " + bucket, e);
        } catch (SdkException e) {
            throw new IOException("Could not read blob " + digest + " from bucket " + bucket, e);
        }
    }

    @Override
    public InputStream open(String digest, long offset, long length) throws IOException {
        if (length <= 0) {
            return InputStream.nullInputStream();
        }
        try {
            return client.getObject(GetObjectRequest.builder().bucket(bucket).key(key(digest))
                    .range("bytes=" + offset + "-" + (offset + length - 1)).build());
        } catch (SdkException e) {
            throw new IOException("Could not read blob " + digest + " from bucket " + bucket, e);
        }
    }

    String key(String digest) {
        return prefix + FileSystemBlobStore.relativePath(digest);
    }
}

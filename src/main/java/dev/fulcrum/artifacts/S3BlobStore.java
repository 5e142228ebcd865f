package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Inject;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.StorageFull;

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
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Blobs as objects of an S3-compatible bucket, under {@code prefix + ab/cd/abcd...}, for replicas that share no
 * filesystem. An upload is first streamed to a local temporary file (its digest names the object, so it must be known
 * before the object is written), then put in one request (above {@code fulcrum.artifacts.s3.part-bytes}, as an S3
 * multipart upload streamed from the file by parts); S3 makes an object visible only once it is complete. Reads stream
 * ranged GETs. A client's multipart upload ({@link #startParts}) is an S3 multipart upload of a staging object
 * {@code uploads/<uuid>}: completing it joins the parts in S3, reads the object once to hash it and copies it to its
 * digest's key (S3's multipart copy above 5 GiB). A full spool disk, or a bucket that answers it has no room, is a
 * {@link StorageFull.NoSpace}; the spool's file is deleted either way.
 */
@ApplicationScoped
@Typed(S3BlobStore.class)
public class S3BlobStore implements BlobStore {

    /** S3's largest single PUT or copy, and its most parts. */
    static final long MAX_PUT = 5L << 30;
    static final int MAX_PARTS = 10_000;

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

    private static final String SPOOL = "the S3 store's upload spool, <fulcrum.data-dir>/blobs-upload";

    /** The local directory an upload is hashed into before it is sent. */
    private Path spool() {
        return config.dataDir().resolve("blobs-upload");
    }

    /** A new file of the spool; a full disk names the spool. */
    private Path spoolFile(String prefix) throws IOException {
        try {
            Files.createDirectories(spool());
            return Files.createTempFile(spool(), prefix, ".part");
        } catch (IOException e) {
            throw StorageFull.named(spool(), SPOOL, e);
        }
    }

    /**
     * The failure of a request to the bucket; a bucket that has no room (MinIO's {@code XMinioStorageFull}, any 507) is
     * a {@link StorageFull.NoSpace}.
     */
    private IOException failed(String message, SdkException e) {
        if (bucketFull(e)) {
            return new StorageFull.NoSpace("bucket " + bucket, "fulcrum.artifacts.s3.bucket", e);
        }
        return new IOException(message, e);
    }

    /** Whether the bucket answered that it has no room: a 507, or MinIO's {@code XMinioStorageFull}. */
    static boolean bucketFull(SdkException e) {
        return e instanceof S3Exception s3 && (s3.statusCode() == 507
                || s3.awsErrorDetails() != null && "XMinioStorageFull".equals(s3.awsErrorDetails().errorCode()));
    }

    @Override
    public Blob put(InputStream content, long maxBytes, Consumer<Blob> publishing) throws IOException {
        Path temp = spoolFile("upload-");
        try {
            Blob blob = FileSystemBlobStore.copy(content, temp, maxBytes);
            publishing.accept(blob);
            if (size(blob.digest()).isEmpty()) {
                if (blob.size() > config.artifacts().s3().partBytes()) {
                    putInParts(temp, key(blob.digest()), blob.size());
                } else {
                    client.putObject(PutObjectRequest.builder().bucket(bucket).key(key(blob.digest()))
                            .contentLength(blob.size()).build(), RequestBody.fromFile(temp));
                }
            }
            return blob;
        } catch (SdkException e) {
            throw failed("Could not store the blob in bucket " + bucket, e);
        } catch (IOException e) {
            throw StorageFull.named(spool(), SPOOL, e);
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

    /** Parts of at least {@code fulcrum.artifacts.s3.part-bytes}, so that no more than S3's 10,000 are needed. */
    long partSize(long size) {
        return Math.max(config.artifacts().s3().partBytes(), (size + MAX_PARTS - 1) / MAX_PARTS);
    }

    /** Writes a local file as an S3 multipart upload, each part streamed from its section of the file. */
    private void putInParts(Path file, String key, long size) {
        String id = client.createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
        try {
            long part = partSize(size);
            List<CompletedPart> done = new ArrayList<>();
            for (int number = 1; (number - 1) * part < size; number++) {
                long offset = (number - 1) * part;
                long length = Math.min(part, size - offset);
                int n = number;
                String etag = client
                        .uploadPart(b -> b.bucket(bucket).key(key).uploadId(id).partNumber(n).contentLength(length),
                                RequestBody.fromContentProvider(() -> section(file, offset, length), length,
                                        "application/octet-stream"))
                        .eTag();
                done.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
            }
            client.completeMultipartUpload(
                    b -> b.bucket(bucket).key(key).uploadId(id).multipartUpload(m -> m.parts(done)));
        } catch (RuntimeException e) {
            abortQuietly(key, id);
            throw e;
        }
    }

    private static InputStream section(Path file, long offset, long length) {
        try {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            channel.position(offset);
            return new FileSystemBlobStore.BoundedInputStream(Channels.newInputStream(channel), length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void abortQuietly(String key, String id) {
        try {
            client.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(id));
        } catch (SdkException e) {
            // unknown or already gone
        }
    }

    // multipart uploads of clients: parts go to an S3 multipart upload of a staging object, {@code uploads/<uuid>}

    @Override
    public void list(Consumer<Listed> each) throws IOException {
        try {
            client.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().forEach(object -> {
                String name = object.key().substring(object.key().lastIndexOf('/') + 1);
                if (name.length() == 64 && name.matches("[0-9a-f]{64}") && object.key().equals(key(name))) {
                    each.accept(new Listed(name, object.size(), object.lastModified()));
                }
            });
        } catch (SdkException e) {
            throw new IOException("Could not list bucket " + bucket, e);
        }
    }

    @Override
    public void delete(String digest) throws IOException {
        try {
            client.deleteObject(b -> b.bucket(bucket).key(key(digest)));
        } catch (SdkException e) {
            throw new IOException("Could not remove blob " + digest + " from bucket " + bucket, e);
        }
    }

    @Override
    public String startParts() throws IOException {
        String staging = UUID.randomUUID().toString();
        try {
            return staging + ":"
                    + client.createMultipartUpload(b -> b.bucket(bucket).key(stagingKey(staging))).uploadId();
        } catch (SdkException e) {
            throw new IOException("Could not start an upload in bucket " + bucket, e);
        }
    }

    @Override
    public String putPart(String upload, int number, InputStream content, long length) throws IOException {
        String[] ids = ids(upload);
        // hashed into a local file first, so that the S3 client can send it again on a retry without hashing twice
        Path temp = spoolFile("part-");
        try {
            MessageDigest md5 = FileSystemBlobStore.md5();
            long written;
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                written = FileSystemBlobStore.append(content, out, length, md5);
            }
            if (written != length) {
                throw new IOException("The part has " + written + " bytes, not " + length);
            }
            client.uploadPart(b -> b.bucket(bucket).key(stagingKey(ids[0])).uploadId(ids[1]).partNumber(number)
                    .contentLength(length), RequestBody.fromFile(temp));
            return HexFormat.of().formatHex(md5.digest());
        } catch (SdkException e) {
            throw failed("Could not store part " + number + " in bucket " + bucket, e);
        } catch (IOException e) {
            throw StorageFull.named(spool(), SPOOL, e);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public Joined completeParts(String upload, int count, long maxBytes, Consumer<Blob> publishing) throws IOException {
        String[] ids = ids(upload);
        String staging = stagingKey(ids[0]);
        try {
            Map<Integer, String> etags = new HashMap<>();
            client.listPartsPaginator(b -> b.bucket(bucket).key(staging).uploadId(ids[1])).parts()
                    .forEach(part -> etags.put(part.partNumber(), part.eTag()));
            List<CompletedPart> parts = new ArrayList<>();
            for (int number = 1; number <= count; number++) {
                if (!etags.containsKey(number)) {
                    throw new MissingPart(number);
                }
                parts.add(CompletedPart.builder().partNumber(number).eTag(etags.get(number)).build());
            }
            client.completeMultipartUpload(
                    b -> b.bucket(bucket).key(staging).uploadId(ids[1]).multipartUpload(m -> m.parts(parts)));
            // the blob is named by its SHA-256: read the joined object once to hash it, then copy it into place
            MessageDigest sha256 = FileSystemBlobStore.sha256();
            MessageDigest md5 = FileSystemBlobStore.md5();
            long size = 0;
            try (InputStream in = client.getObject(b -> b.bucket(bucket).key(staging))) {
                byte[] buffer = new byte[64 * 1024];
                int n;
                while ((n = in.read(buffer)) > 0) {
                    size += n;
                    if (size > maxBytes) {
                        throw new TooLarge(maxBytes);
                    }
                    sha256.update(buffer, 0, n);
                    md5.update(buffer, 0, n);
                }
            }
            Blob blob = new Blob(HexFormat.of().formatHex(sha256.digest()), size);
            publishing.accept(blob);
            if (size(blob.digest()).isEmpty()) {
                copy(staging, key(blob.digest()), size);
            }
            return new Joined(blob, Base64.getEncoder().encodeToString(md5.digest()));
        } catch (SdkException e) {
            throw failed("Could not complete an upload in bucket " + bucket, e);
        } finally {
            abortParts(upload);
        }
    }

    /** Copies an object inside the bucket: one request up to S3's 5 GiB, else a multipart copy by ranges. */
    private void copy(String from, String to, long size) {
        if (size <= MAX_PUT) {
            client.copyObject(b -> b.sourceBucket(bucket).sourceKey(from).destinationBucket(bucket).destinationKey(to));
            return;
        }
        String id = client.createMultipartUpload(b -> b.bucket(bucket).key(to)).uploadId();
        try {
            long part = partSize(size);
            List<CompletedPart> done = new ArrayList<>();
            for (int number = 1; (number - 1) * part < size; number++) {
                long offset = (number - 1) * part;
                long last = Math.min(size, offset + part) - 1;
                int n = number;
                String etag = client
                        .uploadPartCopy(
                                b -> b.sourceBucket(bucket).sourceKey(from).destinationBucket(bucket).destinationKey(to)
                                        .uploadId(id).partNumber(n).copySourceRange("bytes=" + offset + "-" + last))
                        .copyPartResult().eTag();
                done.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
            }
            client.completeMultipartUpload(
                    b -> b.bucket(bucket).key(to).uploadId(id).multipartUpload(m -> m.parts(done)));
        } catch (RuntimeException e) {
            abortQuietly(to, id);
            throw e;
        }
    }

    @Override
    public void abortParts(String upload) throws IOException {
        String[] ids = ids(upload);
        abortQuietly(stagingKey(ids[0]), ids[1]);
        try {
            client.deleteObject(b -> b.bucket(bucket).key(stagingKey(ids[0])));
        } catch (SdkException e) {
            throw new IOException("Could not remove an upload from bucket " + bucket, e);
        }
    }

    private String stagingKey(String staging) {
        return prefix + "uploads/" + staging;
    }

    /** {@code [staging uuid, S3 upload id]} of an upload id {@code uuid:s3id}. */
    private static String[] ids(String upload) {
        int colon = upload.indexOf(':');
        if (colon != 36) {
            throw new IllegalArgumentException("Not an upload id: " + upload);
        }
        UUID.fromString(upload.substring(0, colon));
        return new String[] { upload.substring(0, colon), upload.substring(colon + 1) };
    }

    String key(String digest) {
        return prefix + FileSystemBlobStore.relativePath(digest);
    }
}

package dev.fulcrum.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Inject;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.StorageFull;

/**
 * Blobs as files under {@code fulcrum.artifacts.blob-dir} (default {@code ${fulcrum.data-dir}/blobs}), at
 * {@code ab/cd/abcd...}. Content is written to a temporary file in the same directory tree, flushed to disk and then
 * renamed into place, so a crash, a cut-off upload or a full disk never leaves a partial blob under a digest; a full
 * disk is a {@link StorageFull.NoSpace} naming the blob directory.
 */
@ApplicationScoped
@Typed(FileSystemBlobStore.class)
public class FileSystemBlobStore implements BlobStore {

    private static final Pattern DIGEST = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern UPLOAD = Pattern
            .compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    private static final int BUFFER = 64 * 1024;

    @Inject
    FulcrumConfig config;

    Path root() {
        return config.artifacts().blobDir().orElse(config.dataDir().resolve("blobs"));
    }

    @Override
    public Blob put(InputStream content, long maxBytes, Consumer<Blob> publishing) throws IOException {
        try {
            Path tmp = root().resolve("tmp");
            Files.createDirectories(tmp);
            Path temp = Files.createTempFile(tmp, "upload-", ".part");
            try {
                Blob blob = copy(content, temp, maxBytes);
                publish(temp, blob, publishing);
                return blob;
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            throw full(e);
        }
    }

    /** {@code e} naming the blob directory when the file system it is on is full. */
    private IOException full(IOException e) {
        return StorageFull.named(root(), SETTING, e);
    }

    private static final String SETTING = "fulcrum.artifacts.blob-dir, by default <fulcrum.data-dir>/blobs";

    /**
     * Makes the written file {@code temp} the blob, after {@code publishing} marked it (see {@link BlobStore#put}):
     * moved into place unless the store has the content already.
     */
    private void publish(Path temp, Blob blob, Consumer<Blob> publishing) throws IOException {
        publishing.accept(blob);
        Path target = path(blob.digest());
        if (!Files.exists(target)) {
            Files.createDirectories(target.getParent());
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException e) {
                // stored concurrently with the same content
            }
        }
    }

    /** Copies at most {@code maxBytes} of {@code content} into {@code file}, flushed to disk, hashing as it goes. */
    static Blob copy(InputStream content, Path file, long maxBytes) throws IOException {
        MessageDigest sha256 = sha256();
        long size;
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            size = append(content, out, maxBytes, sha256);
            out.force(true);
        }
        return new Blob(HexFormat.of().formatHex(sha256.digest()), size);
    }

    @Override
    public Optional<Long> size(String digest) throws IOException {
        Path file = path(digest);
        return Files.exists(file) ? Optional.of(Files.size(file)) : Optional.empty();
    }

    @Override
    public InputStream open(String digest, long offset, long length) throws IOException {
        FileChannel channel;
        try {
            channel = FileChannel.open(path(digest), StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new IOException("Blob " + digest + " is missing from " + root(), e);
        }
        channel.position(offset);
        InputStream in = Channels.newInputStream(channel);
        return new BoundedInputStream(in, length);
    }

    @Override
    public void list(Consumer<Listed> each) throws IOException {
        Path root = root();
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                if (DIGEST.matcher(name).matches() && file.equals(path(name)) && Files.isRegularFile(file)) {
                    try {
                        each.accept(new Listed(name, Files.size(file), Files.getLastModifiedTime(file).toInstant()));
                    } catch (NoSuchFileException e) {
                        // removed meanwhile
                    }
                }
            }
        }
    }

    @Override
    public void delete(String digest) throws IOException {
        Files.deleteIfExists(path(digest));
    }

    @Override
    public String startParts() throws IOException {
        String upload = UUID.randomUUID().toString();
        try {
            Files.createDirectories(parts(upload));
        } catch (IOException e) {
            throw full(e);
        }
        return upload;
    }

    @Override
    public String putPart(String upload, int number, InputStream content, long length) throws IOException {
        Path dir = parts(upload);
        if (!Files.isDirectory(dir)) {
            throw new IOException("No upload " + upload);
        }
        Path temp;
        try {
            temp = Files.createTempFile(dir, "part-", ".tmp");
        } catch (IOException e) {
            throw full(e);
        }
        try {
            MessageDigest md5 = md5();
            long written;
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                written = append(content, out, length, md5);
                out.force(true);
            }
            if (written != length) {
                throw new IOException("The part has " + written + " bytes, not " + length);
            }
            Files.move(temp, dir.resolve(Integer.toString(number)), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            return HexFormat.of().formatHex(md5.digest());
        } catch (IOException e) {
            throw full(e);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public Joined completeParts(String upload, int count, long maxBytes, Consumer<Blob> publishing) throws IOException {
        Path dir = parts(upload);
        Path tmp = root().resolve("tmp");
        Path temp;
        try {
            Files.createDirectories(tmp);
            temp = Files.createTempFile(tmp, "join-", ".part");
        } catch (IOException e) {
            throw full(e);
        }
        try {
            MessageDigest sha256 = sha256();
            MessageDigest md5 = md5();
            long size = 0;
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                for (int number = 1; number <= count; number++) {
                    try (InputStream in = Files.newInputStream(dir.resolve(Integer.toString(number)))) {
                        size += append(in, out, maxBytes - size, sha256, md5);
                    } catch (NoSuchFileException e) {
                        throw new MissingPart(number);
                    }
                }
                out.force(true);
            }
            Blob blob = new Blob(HexFormat.of().formatHex(sha256.digest()), size);
            publish(temp, blob, publishing);
            abortParts(upload);
            return new Joined(blob, Base64.getEncoder().encodeToString(md5.digest()));
        } catch (IOException e) {
            throw full(e);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public void abortParts(String upload) throws IOException {
        Path dir = parts(upload);
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** The directory of an upload's parts, {@code tmp/parts/<uuid>}. */
    Path parts(String upload) {
        if (!UPLOAD.matcher(upload).matches()) {
            throw new IllegalArgumentException("Not an upload id: " + upload);
        }
        return root().resolve("tmp").resolve("parts").resolve(upload);
    }

    /**
     * Appends {@code content} to {@code out} through a small buffer, hashing as it goes; more than {@code maxBytes} is
     * {@link TooLarge}. Answers the bytes appended.
     */
    static long append(InputStream content, FileChannel out, long maxBytes, MessageDigest... digests)
            throws IOException {
        long size = 0;
        byte[] buffer = new byte[BUFFER];
        int n;
        while ((n = content.read(buffer)) > 0) {
            size += n;
            if (size > maxBytes) {
                throw new TooLarge(maxBytes);
            }
            for (MessageDigest digest : digests) {
                digest.update(buffer, 0, n);
            }
            ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
            while (chunk.hasRemaining()) {
                out.write(chunk);
            }
        }
        return size;
    }

    static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    Path path(String digest) {
        return root().resolve(relativePath(digest));
    }

    /** {@code ab/cd/abcd...}: two directory levels keep directories small. */
    static String relativePath(String digest) {
        if (!DIGEST.matcher(digest).matches()) {
            throw new IllegalArgumentException("Not a SHA-256 digest: " + digest);
        }
        return digest.substring(0, 2) + "/" + digest.substring(2, 4) + "/" + digest;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads at most {@code remaining} bytes of the stream it wraps. */
    static final class BoundedInputStream extends InputStream {
        private final InputStream in;
        private long remaining;

        BoundedInputStream(InputStream in, long remaining) {
            this.in = in;
            this.remaining = remaining;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                remaining--;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}

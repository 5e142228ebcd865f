package dev.fulcrum.platform.database;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.jboss.logging.Logger;

/**
 * The embedded PostgreSQL's data directory held by one Fulcrum at a time: an operating-system lock on the file beside
 * it ({@code postgres.lock}), which ends with the process however it ends (a {@code kill -9} too). Holding it, a
 * Fulcrum knows that a PostgreSQL still running in the directory is an orphan of an earlier run and may stop it; not
 * getting it, a Fulcrum stops with a message naming the one that holds it, instead of taking its database away.
 */
final class DirectoryLock {

    private static final Logger LOG = Logger.getLogger(DirectoryLock.class);

    private final FileChannel channel;
    private final FileLock lock;

    private DirectoryLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock of {@code directory}, or throws a one-line {@link EmbeddedDatabase.StartFailure}. */
    static DirectoryLock take(Path directory) {
        Path file = directory.resolveSibling(directory.getFileName() + ".lock");
        FileChannel channel = null;
        try {
            Files.createDirectories(file.getParent());
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null; // this JVM holds it already
            }
            if (lock == null) {
                String holder = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).strip();
                channel.close();
                throw failure("the data directory " + directory.getParent().toAbsolutePath()
                        + " is in use by another Fulcrum" + (holder.isEmpty() ? "" : " (process " + holder + ")")
                        + ". What to do: stop that one, or start this one with a data directory of its own"
                        + " (FULCRUM_DATA_DIR).", null);
            }
            channel.truncate(0);
            channel.write(
                    ByteBuffer.wrap(Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)));
            channel.force(false);
            return new DirectoryLock(channel, lock);
        } catch (IOException e) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // the failure below is the one to report
                }
            }
            throw failure("the lock file " + file.toAbsolutePath() + " cannot be written (" + e.getMessage()
                    + "). What to do: make the data directory writable by this user, or choose another with"
                    + " FULCRUM_DATA_DIR.", e);
        }
    }

    private static EmbeddedDatabase.StartFailure failure(String reason, Throwable cause) {
        String message = "Fulcrum could not start its embedded PostgreSQL: " + reason;
        LOG.error(message);
        return new EmbeddedDatabase.StartFailure(message, cause);
    }

    void release() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
            channel.close();
        } catch (IOException e) {
            LOG.debug("Could not release the data directory's lock", e);
        }
    }
}

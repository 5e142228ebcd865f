package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jboss.logging.Logger;

import dev.fulcrum.inference.hub.HubException.Reason;

/**
 * The pulled files on disk, stored by digest: each file downloads to {@code partial/} and, once its sha256 is the one
 * the Hub states, moves to {@code blobs/sha256-<hex>.gguf} (the parts of a split GGUF as
 * {@code sha256-<hex of the first part>-0000i-of-0000N.gguf}, the names llama.cpp finds the parts by; a file whose
 * listing stated no sha256 by its commit and path instead, which name one content as well). Two pulls of one file share
 * it; a file no pull names any more is deleted. A file downloads once at a time in the directory, whoever shares it: a
 * lock in memory for this replica's pulls, a lock of the file system for the replicas that mount it.
 */
final class PulledFiles {

    private static final Logger LOG = Logger.getLogger(PulledFiles.class);
    private static final String LOCK = ".lock";
    private static final long LOCK_POLL_MILLIS = 200;

    /** Fills a partial file with a file's bytes and answers the sha256 the Hub states for them. */
    interface Download {
        String into(Path part);
    }

    private final Path blobs;
    private final Path partial;
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    /** Held while files move into the store or are deleted from it. */
    private final Object store = new Object();

    PulledFiles(Path modelDir) {
        this.blobs = modelDir.resolve("blobs");
        this.partial = modelDir.resolve("partial");
    }

    /** Where part {@code index} of a pull's files (of that commit) is stored. */
    Path blob(String commit, List<HubFile> files, int index) {
        return blobs.resolve(blobName(commit, files, index));
    }

    /** Whether every file of a pull is stored. */
    boolean holds(String commit, List<HubFile> files) {
        for (int i = 0; i < files.size(); i++) {
            if (!Files.exists(blob(commit, files, i))) {
                return false;
            }
        }
        return !files.isEmpty();
    }

    /**
     * Part {@code index} of a pull's files in the store: there already, or downloaded, checked against the digest the
     * download answers and moved in. One download of a file at a time, on this replica (a lock in memory) and among the
     * replicas that share the model directory (a lock of the file system on {@code partial/<name>.lock}): a second pull
     * of it waits, then finds it there, or resumes what the first left if that one stopped.
     */
    Path store(List<HubFile> files, int index, String commit, String repo, Download download) {
        HubFile file = files.get(index);
        Path blob = blob(commit, files, index);
        synchronized (locks.computeIfAbsent(blob.getFileName().toString(), k -> new Object())) {
            if (Files.exists(blob)) {
                return blob;
            }
            try {
                Files.createDirectories(partial);
                Files.createDirectories(blobs);
            } catch (IOException e) {
                throw new HubException(Reason.NO_SPACE, "Cannot create " + partial + ": " + e.getMessage(), e);
            }
            Path part = partial.resolve(partName(commit, file));
            try (FileChannel held = lock(partial.resolve(partName(commit, file) + LOCK))) {
                if (Files.exists(blob)) {
                    return blob; // another replica stored it while this one waited
                }
                return fetch(file, part, blob, repo, download);
            } catch (IOException e) {
                throw new HubException(Reason.BAD_FILE, "Cannot lock " + part + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * The file {@code lock} open and locked by the file system (closing it unlocks it), waited for while another
     * process (a replica sharing the model directory) holds the lock; another holder in this JVM waits as well.
     */
    private static FileChannel lock(Path lock) throws IOException {
        FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            while (true) {
                try {
                    if (channel.tryLock() != null) {
                        return channel;
                    }
                } catch (OverlappingFileLockException e) {
                    // held by another store of this JVM (the tests' second replica): wait as for another process
                }
                try {
                    Thread.sleep(LOCK_POLL_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CancellationException("interrupted");
                }
            }
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Downloads a file, checks its digest and moves it into the store. */
    private Path fetch(HubFile file, Path part, Path blob, String repo, Download download) {
        String expected;
        try {
            expected = download.into(part);
        } catch (HubException e) {
            if (e.reason() == Reason.NO_SPACE) {
                delete(part); // nothing to resume from a disk that stays full: its space back to the others
            }
            throw e;
        }
        if (expected == null) {
            throw new HubException(Reason.BAD_FILE, "The Hub states no sha256 for " + file.path() + " of " + repo
                    + "; Fulcrum uses no file it cannot check");
        }
        String actual = sha256(part);
        if (!actual.equals(expected)) {
            delete(part);
            throw new HubException(Reason.BAD_FILE, "The sha256 of " + file.path() + " as downloaded is " + actual
                    + ", the Hub states " + expected + ": the file was deleted");
        }
        moveIn(part, blob);
        return blob;
    }

    /**
     * Fails with {@code NO_SPACE}, in words, when the disk of the store has less room than a pull's files need (the
     * parts not stored yet, less what their partial files hold), so that a pull that cannot fit is refused before it
     * begins rather than filling the disk.
     */
    void checkRoom(String commit, List<HubFile> files) {
        long needed = 0;
        for (int i = 0; i < files.size(); i++) {
            if (!Files.exists(blob(commit, files, i))) {
                needed += files.get(i).size() - size(partial.resolve(partName(commit, files.get(i))));
            }
        }
        if (needed <= 0) {
            return;
        }
        Path existing = blobs.toAbsolutePath();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        long free;
        try {
            free = existing == null ? Long.MAX_VALUE : Files.getFileStore(existing).getUsableSpace();
        } catch (IOException e) {
            return; // the download itself will say what is wrong with the disk
        }
        if (free < needed) {
            throw new HubException(Reason.NO_SPACE,
                    "The storage is full: the pull needs %s more, %s are free in %s (fulcrum.inference.hub.model-dir)"
                            .formatted(PullStatus.bytes(needed), PullStatus.bytes(free), blobs.getParent()));
        }
    }

    private static long size(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private void moveIn(Path part, Path blob) {
        synchronized (store) {
            try {
                try {
                    Files.move(part, blob, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(part, blob, StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                throw new HubException(Reason.BAD_FILE, "Cannot store " + blob + ": " + e.getMessage(), e);
            }
        }
    }

    /** The names, stored and partial, of a pull's files: what {@link #freeUnused} keeps. */
    static Stream<String> names(String commit, List<HubFile> files) {
        Stream.Builder<String> names = Stream.builder();
        for (int i = 0; i < files.size(); i++) {
            names.add(blobName(commit, files, i));
            names.add(partName(commit, files.get(i)));
            names.add(partName(commit, files.get(i)) + LOCK);
        }
        return names.build();
    }

    /** Deletes the stored and partial files whose names {@code kept} (read under the store's lock) leaves out. */
    void freeUnused(Supplier<Set<String>> kept) {
        synchronized (store) {
            Set<String> names = kept.get();
            for (Path dir : List.of(blobs, partial)) {
                if (!Files.isDirectory(dir)) {
                    continue;
                }
                try (Stream<Path> listed = Files.list(dir)) {
                    for (Path file : listed.toList()) {
                        if (!names.contains(file.getFileName().toString())) {
                            Files.deleteIfExists(file);
                        }
                    }
                } catch (IOException e) {
                    LOG.warnf("Could not free unused model files in %s: %s", dir, e.getMessage());
                }
            }
        }
    }

    /**
     * A stored file's name: by the sha256 of the file, or of the first part of a split one; by the commit and path of
     * the first when the listing stated no sha256 (the download's is checked, but known only once it is done).
     */
    private static String blobName(String commit, List<HubFile> files, int index) {
        String digest = stem(commit, files.get(0)).replaceAll("\\.gguf$", "");
        int[] split = HubFiles.split(files.get(index).path());
        return split == null ? digest + ".gguf" : "%s-%05d-of-%05d.gguf".formatted(digest, split[0], split[1]);
    }

    private static String partName(String commit, HubFile file) {
        return stem(commit, file) + ".part";
    }

    /** What names a file on disk: its sha256, else the commit and its path (as one file name). */
    private static String stem(String commit, HubFile file) {
        return file.sha256() != null ? "sha256-" + file.sha256()
                : commit + "-" + file.path().replaceAll("[^A-Za-z0-9._-]", "_");
    }

    static String sha256(Path file) {
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), MessageDigest.getInstance("SHA-256"))) {
            byte[] buffer = new byte[1 << 16];
            while (in.read(buffer) >= 0) {
                // the digest reads along
            }
            return HexFormat.of().formatHex(((DigestInputStream) in).getMessageDigest().digest());
        } catch (IOException e) {
            throw new HubException(Reason.BAD_FILE, "Cannot read " + file + ": " + e.getMessage(), e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warnf("Could not delete %s: %s", file, e.getMessage());
        }
    }
}

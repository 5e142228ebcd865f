package dev.fulcrum.platform;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Files only the server's own user may read: key material generated into the data directory. */
public final class PrivateFiles {

    private PrivateFiles() {
    }

    /** Writes {@code content} with permissions 0600, atomically, so a crash never leaves half a key behind. */
    public static void write(Path file, byte[] content) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(temp, content);
        if (temp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    }
}

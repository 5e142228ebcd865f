package dev.fulcrum.artifacts;

import java.util.Collection;
import java.util.Set;

/**
 * The files of a version (or of a checkpoint being uploaded) are one directory tree: it is written out as one when a
 * checkpoint is served (a LoRA adapter's directory) or downloaded by a client, so no path may also be a directory of
 * another ({@code nested} and {@code nested/inner.bin}); the second write would fail on every use.
 */
public final class FileTree {

    private FileTree() {
    }

    /** Why {@code added} cannot join {@code paths}, or null when it can (a path given again replaces itself). */
    public static String clash(Collection<String> paths, String added) {
        for (String path : paths) {
            if (added.startsWith(path + "/")) {
                return "The path " + added + " needs a directory " + path + ", which is a file";
            }
            if (path.startsWith(added + "/")) {
                return "The path " + added + " is a directory, holding " + path;
            }
        }
        return null;
    }

    /** Why these paths are not one tree, or null when they are. */
    public static String clash(Set<String> paths) {
        for (String path : paths) {
            for (int slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1)) {
                String directory = path.substring(0, slash);
                if (paths.contains(directory)) {
                    return "The path " + path + " needs a directory " + directory + ", which is a file";
                }
            }
        }
        return null;
    }
}

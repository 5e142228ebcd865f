package dev.fulcrum.inference.catalog;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.apache.commons.io.file.PathUtils;

import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.platform.errors.StorageFull;

/**
 * A checkpoint's files where an engine reads them: one file straight from the blob store ({@link #open}), or all of
 * them written once into {@code fulcrum.inference.checkpoints.export-dir}/{entity}/{project}/{model}/step{N}-a{version}
 * (a temporary directory renamed into place) for engines that load a directory ({@link #export}). Both read as the
 * current caller.
 */
@ApplicationScoped
public class CheckpointExports {

    /** Files of a checkpoint that only training reads (the worker's optimizer state), never exported for an engine. */
    private static final Set<String> TRAINING_ONLY = Set.of("optimizer.pt");

    @Inject
    ArtifactVersions artifacts;

    @Inject
    BlobStore blobs;

    @Inject
    InferenceConfig config;

    /** A checkpoint's files on disk: its adapter's name, its directory as Fulcrum and as the model server see it. */
    public record Export(String name, Path directory, String serverPath) {
    }

    /** One file of the checkpoint, from the blob store. */
    public InputStream open(Checkpoint checkpoint, String path) throws IOException {
        FileView file = artifacts.file(checkpoint.entity(), checkpoint.project(), checkpoint.name(),
                checkpoint.version(), path);
        return blobs.open(file.digest(), 0, file.size());
    }

    /**
     * Writes the checkpoint's files into its export directory unless they are there. Blocking: runs on a worker thread.
     */
    public Export export(Checkpoint checkpoint) {
        Path root = config.checkpoints().exportDir().toAbsolutePath().normalize();
        String leaf = "step" + checkpoint.step() + "-a" + checkpoint.versionId();
        Path dir = root.resolve(checkpoint.entity()).resolve(checkpoint.project()).resolve(checkpoint.name())
                .resolve(leaf).normalize();
        if (!dir.startsWith(root) || dir.getNameCount() != root.getNameCount() + 4) {
            throw InferenceFailure.notFound("The checkpoint's name cannot be a directory name");
        }
        Path relative = root.relativize(dir);
        String serverPath = config.checkpoints().serverDir().filter(s -> !s.isBlank())
                .map(server -> server.replaceAll("/+$", "") + "/" + relative.toString().replace('\\', '/'))
                .orElse(dir.toString());
        Export export = new Export(adapterName(checkpoint), dir, serverPath);
        if (Files.isDirectory(dir)) {
            return export;
        }
        VersionView version = artifacts.getVersion(checkpoint.entity(), checkpoint.project(), checkpoint.name(),
                checkpoint.version());
        if (version.id() != checkpoint.versionId()) {
            throw InferenceFailure.notFound("The checkpoint changed while it was being served; retry");
        }
        try {
            Files.createDirectories(dir.getParent());
            Path temp = Files.createTempDirectory(dir.getParent(), "." + leaf + "-");
            try {
                for (FileView file : version.files()) {
                    if (TRAINING_ONLY.contains(file.path())) {
                        continue;
                    }
                    Path target = temp.resolve(file.path()).normalize();
                    if (!target.startsWith(temp) || target.equals(temp)) {
                        continue; // artifact paths are relative; nothing is written outside the directory
                    }
                    Files.createDirectories(target.getParent());
                    try (InputStream in = blobs.open(file.digest(), 0, file.size())) {
                        Files.copy(in, target);
                    }
                }
                try {
                    Files.move(temp, dir, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    if (!Files.isDirectory(dir)) { // else another request or replica was first: same files
                        throw e;
                    }
                }
            } finally {
                deleteTree(temp);
            }
        } catch (IOException e) {
            // a full disk is the operator's to free, named so; nothing half written stays (the temporary tree went)
            throw new UncheckedIOException(StorageFull.named(root, "fulcrum.inference.checkpoints.export-dir", e));
        }
        return export;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            PathUtils.deleteDirectory(dir);
        }
    }

    /**
     * The adapter's name: {@code {entity}--{project}--{model}--step{N}-a{version}}, characters vLLM accepts only.
     */
    static String adapterName(Checkpoint checkpoint) {
        String raw = checkpoint.entity() + "--" + checkpoint.project() + "--" + checkpoint.name() + "--step"
                + checkpoint.step() + "-a" + checkpoint.versionId();
        String name = raw.replaceAll("[^A-Za-z0-9._-]", "_");
        if (name.equals(raw)) {
            return name;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
            return name + "-" + HexFormat.of().formatHex(digest, 0, 4); // two raw names cannot share a cleaned one
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

package dev.fulcrum.tinker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.Date;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.core.UriBuilder;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.io.output.CountingOutputStream;
import org.apache.commons.io.output.NullOutputStream;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.training.Checkpoints;
import dev.fulcrum.training.TrainingModels;

/**
 * The download of saved weights ({@code RestClient.get_checkpoint_archive_url}, which {@code tinker checkpoint
 * download} uses): the SDK's request answers a signed URL of this server, valid {@link #VALID}, and the URL answers,
 * without credentials, a POSIX tar of the Fulcrum checkpoint's files with its exact length. The signature stands for
 * the rights checked when it was made: the weights are the caller's, and the caller still has a role on the model's
 * project. Any replica checks it (the key derives from the master key).
 */
@ApplicationScoped
public class TinkerArchives {

    static final String SIGNING = "tinker-archive-url";
    static final Duration VALID = Duration.ofMinutes(15);
    private static final int BUFFER = 1 << 16;

    @Inject
    Tinker tinker;

    @Inject
    TrainingModels trainingModels;

    @Inject
    Checkpoints checkpoints;

    @Inject
    ArtifactVersions versions;

    @Inject
    BlobStore blobs;

    @Inject
    SecretCipher cipher;

    /** A signed URL and when it stops working. */
    public record Signed(URI url, Instant expires) {
    }

    /** What a signed URL downloads: the checkpoint's files in path order, and the archive's length. */
    public record Archive(String fileName, List<FileView> files, Instant modified, long length) {
    }

    /**
     * The signed URL of the caller's saved weights {@code kind/name} of model {@code id}, under {@code base} (this
     * server as the client reached it); 404 for unknown or another user's weights, 403 without a role on the project.
     */
    @Transactional
    public Signed sign(String id, String kind, String name, URI base) {
        Tinker.Saved saved = tinker.savedAt(id, kind, name);
        trainingModels.model(saved.model().trainingModelId, Role.VIEWER);
        long expires = Instant.now().plus(VALID).getEpochSecond();
        URI url = UriBuilder.fromUri(base).path("tinker/api/v1/checkpoint_archives/{id}/{kind}/{name}")
                .queryParam("expires", expires)
                .queryParam("signature", cipher.sign(SIGNING, message(id, kind, name) + " " + expires))
                .build(id, kind, name);
        return new Signed(url, Instant.ofEpochSecond(expires));
    }

    /**
     * The archive a signed URL downloads; 403 for a signature that is not this server's or has expired, 404 when the
     * weights were deleted since.
     */
    @Transactional
    public Archive archive(String id, String kind, String name, long expires, String signature) {
        if (!cipher.signedUntil(SIGNING, message(id, kind, name), expires, signature)) {
            throw ApiException.forbidden("The URL's signature is not valid or it expired");
        }
        TinkerModel model = TinkerModel.findById(id);
        TinkerCheckpoint saved = model == null ? null
                : TinkerCheckpoint.<TinkerCheckpoint> find("modelId = ?1 and kind = ?2 and name = ?3", id, kind, name)
                        .firstResult();
        Checkpoints.Stored stored = saved == null ? null
                : checkpoints.stored(model.trainingModelId, saved.step).orElse(null);
        if (stored == null) {
            throw ApiException.notFound("No saved weights tinker://" + id + "/" + kind + "/" + name);
        }
        List<FileView> files = versions.signedFiles(stored.artifactVersionId(), null).stream()
                .sorted(Comparator.comparing(FileView::path)).toList();
        Instant modified = saved.createdAt.toInstant().truncatedTo(ChronoUnit.SECONDS);
        return new Archive(id.replace(':', '-') + "-" + kind + "-" + name + ".tar", files, modified,
                length(files, modified));
    }

    /** Writes the archive: each file under its path, its bytes read from the blob store. */
    public void write(Archive archive, OutputStream out) throws IOException {
        TarArchiveOutputStream tar = tar(out);
        byte[] buffer = new byte[BUFFER];
        for (FileView file : archive.files()) {
            tar.putArchiveEntry(entry(file, archive.modified()));
            try (InputStream in = blobs.open(file.digest(), 0, file.size())) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    tar.write(buffer, 0, n);
                }
            }
            tar.closeArchiveEntry();
        }
        tar.finish();
        tar.flush();
    }

    /** The archive's length: the same archive written with zeros for content, counted. */
    private static long length(List<FileView> files, Instant modified) {
        CountingOutputStream counted = new CountingOutputStream(NullOutputStream.INSTANCE);
        try {
            TarArchiveOutputStream tar = tar(counted);
            byte[] zeros = new byte[BUFFER];
            for (FileView file : files) {
                tar.putArchiveEntry(entry(file, modified));
                for (long left = file.size(); left > 0; left -= zeros.length) {
                    tar.write(zeros, 0, (int) Math.min(left, zeros.length));
                }
                tar.closeArchiveEntry();
            }
            tar.finish();
            tar.flush();
        } catch (IOException e) {
            throw new IllegalStateException(e); // a stream that keeps nothing does not fail
        }
        return counted.getByteCount();
    }

    private static TarArchiveOutputStream tar(OutputStream out) {
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out, StandardCharsets.UTF_8.name());
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        return tar;
    }

    private static TarArchiveEntry entry(FileView file, Instant modified) {
        TarArchiveEntry entry = new TarArchiveEntry(file.path());
        entry.setSize(file.size());
        entry.setModTime(Date.from(modified));
        return entry;
    }

    /** What a URL's signature signs, with its expiry after it (the name, which may hold spaces, before that). */
    private static String message(String id, String kind, String name) {
        return "GET archive " + id + " " + kind + " " + name;
    }
}

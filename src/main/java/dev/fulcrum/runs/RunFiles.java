package dev.fulcrum.runs;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;

/**
 * The files of a run (table {@code run_files}): one row per run and name, the bytes a blob of the blob store as an
 * artifact file's are, replaced when the name is uploaded again. {@code output.log} is not stored: it is the run's
 * console lines ({@code run_output}, written by the W&B file stream), listed and read as one file, so there is one
 * source of a run's output.
 */
@ApplicationScoped
public class RunFiles {

    public static final String OUTPUT = "output.log";
    public static final int MAX_NAME = 1024;
    static final int MAX_LIMIT = 1000;

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    BlobChecksums checksums;

    @Inject
    BlobStore blobs;

    @Inject
    FulcrumConfig config;

    /** A file of a run; {@code md5} (base64) is null for {@code output.log}, whose digest is computed when read. */
    public record RunFile(String name, long size, String digest, String md5, String contentType,
            OffsetDateTime updatedAt) {
    }

    /** A run as its files know it: its id and project. */
    public record RunRef(long id, String entity, String project, String name) {
    }

    public record Page(List<RunFile> items, String nextAfter, long total) {
    }

    /** The run, for a caller with {@code role} on its project (404 for a run that does not exist). */
    @Transactional
    public RunRef run(String entity, String project, String run, Role role) {
        ProjectRef ref = role == Role.VIEWER ? access.readableProject(entity, project)
                : access.project(entity, project, role);
        return RunFileStatements.runId(em, ref.projectId(), run)
                .map(id -> new RunRef(id, ref.entity(), ref.project(), run))
                .orElseThrow(() -> ApiException.notFound("Run " + run + " not found in " + entity + "/" + project));
    }

    /** A run by id, without an access check: for a signed URL, whose signature stands for the caller's rights. */
    @Transactional
    public RunRef signedRun(long runId) {
        return RunFileStatements.run(em, runId).orElseThrow(() -> ApiException.notFound("No run " + runId));
    }

    /** A name a run file may have: a relative path of at most 1,024 characters, no NUL, no {@code ..} segment. */
    public static String checkName(String name, Object... loc) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME || name.indexOf('\0') >= 0
                || name.startsWith("/") || List.of(name.split("/")).contains("..")) {
            throw ApiException.invalid(
                    Violation.of("A file name is a relative path of 1 to " + MAX_NAME + " characters without '..'",
                            "value_error", loc));
        }
        return name;
    }

    /**
     * Stores an uploaded file of the run (replacing the one of that name); the upload of {@code output.log} is read and
     * dropped, as the run's output is its console lines. Bounded by {@code fulcrum.artifacts.max-file-bytes} (413).
     */
    public void store(long runId, String name, InputStream body) {
        checkName(name, "query", "name");
        long max = config.artifacts().maxFileBytes();
        try {
            if (OUTPUT.equals(name)) {
                body.transferTo(OutputStream.nullOutputStream());
                return;
            }
            BlobChecksums.Checked checked = checksums.put(body, max);
            record(runId, name, checked);
        } catch (BlobStore.TooLarge e) {
            throw ApiException.payloadTooLarge("The file is larger than " + max + " bytes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Transactional
    void record(long runId, String name, BlobChecksums.Checked checked) {
        RunFileStatements.record(em, runId, name, checked, contentType(name));
    }

    /**
     * The run's files by name, {@code output.log} among them when the run has console lines: those named (all when
     * none), after the name {@code after}, at most {@code limit} (default 100, at most 1,000).
     */
    @Transactional
    public Page list(RunRef run, List<String> names, String after, Integer limit) {
        int size = QueryParams.limit(limit, 100, 1, MAX_LIMIT);
        List<String> wanted = names == null ? List.of() : names.stream().filter(n -> n != null).toList();
        List<RunFile> all = new ArrayList<>(RunFileStatements.list(em, run.id(), wanted));
        if (wanted.isEmpty() || wanted.contains(OUTPUT)) {
            output(run.id()).ifPresent(output -> {
                int at = 0;
                while (at < all.size() && all.get(at).name().compareTo(OUTPUT) < 0) {
                    at++;
                }
                all.add(at, output);
            });
        }
        List<RunFile> page = all.stream().filter(f -> after == null || f.name().compareTo(after) > 0).limit(size + 1)
                .toList();
        String next = page.size() > size ? page.get(size - 1).name() : null;
        return new Page(page.size() > size ? page.subList(0, size) : page, next, all.size());
    }

    /** A file of the run; 404 when there is none. */
    @Transactional
    public RunFile file(RunRef run, String name) {
        Optional<RunFile> found = OUTPUT.equals(name) ? output(run.id()) : RunFileStatements.file(em, run.id(), name);
        return found.orElseThrow(() -> ApiException.notFound("No file " + name + " in run " + run.name()));
    }

    /** The run's {@code output.log}: its console lines in order, each ended by a newline; its digest their SHA-256. */
    @Transactional
    public byte[] outputBytes(RunRef run) {
        StringBuilder text = RunFileStatements.outputText(em, run.id());
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The output file with the SHA-256 of its bytes as digest (what a download's ETag is). */
    public RunFile withDigest(RunFile output, byte[] bytes) {
        try {
            String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
            return new RunFile(output.name(), bytes.length, digest, null, output.contentType(), output.updatedAt());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public InputStream open(RunFile file, long offset, long length) throws IOException {
        return blobs.open(file.digest(), offset, length);
    }

    public static InputStream slice(byte[] bytes, long offset, long length) {
        return new ByteArrayInputStream(bytes, (int) offset, (int) length);
    }

    private Optional<RunFile> output(long runId) {
        return RunFileStatements.output(em, runId, OUTPUT, "text/plain; charset=utf-8");
    }

    private static final Map<String, String> TYPES = Map.ofEntries(Map.entry("png", "image/png"),
            Map.entry("jpg", "image/jpeg"), Map.entry("jpeg", "image/jpeg"), Map.entry("gif", "image/gif"),
            Map.entry("svg", "image/svg+xml"), Map.entry("json", "application/json"),
            Map.entry("html", "text/html; charset=utf-8"), Map.entry("txt", "text/plain; charset=utf-8"),
            Map.entry("log", "text/plain; charset=utf-8"), Map.entry("yaml", "application/yaml"),
            Map.entry("yml", "application/yaml"), Map.entry("wav", "audio/wav"), Map.entry("mp3", "audio/mpeg"),
            Map.entry("mp4", "video/mp4"));

    /** The type a run file is served with, from its name's extension (W&B's uploads carry none). */
    static String contentType(String name) {
        int dot = name.lastIndexOf('.');
        String extension = dot < 0 ? "" : name.substring(dot + 1).toLowerCase(Locale.ROOT);
        return TYPES.getOrDefault(extension, "application/octet-stream");
    }
}

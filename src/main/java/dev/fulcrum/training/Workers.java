package dev.fulcrum.training;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.jwt.JsonWebToken;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Authentication;
import dev.fulcrum.accounts.JwtTokens;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.artifacts.FileTree;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.training.JobQueue.Claimed;
import dev.fulcrum.training.JobQueue.LeaseLost;

/**
 * The external worker protocol: registration and claims with a server administrator's API key, everything about one job
 * with the job-scoped token of its claim (a JWT naming the job and the attempt). Every job call renews the lease first,
 * so a call of an attempt that lost its lease answers 409.
 */
@ApplicationScoped
public class Workers {

    static final String SCOPE = "training-job";
    private static final Pattern PATH = Pattern.compile("[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*");
    private static final long CLAIM_POLL_MILLIS = 250;

    @Inject
    Access access;

    @Inject
    WorkerStatements upserts;

    @Inject
    TrainingSettings settings;

    @Inject
    BaseModels trainable;

    @Inject
    JobQueue queue;

    @Inject
    JwtTokens jwt;

    @Inject
    ArtifactVersions artifacts;

    @Inject
    BlobStore blobs;

    @Inject
    BlobChecksums checksums;

    @Inject
    TrainingJobs jobs;

    public record WorkerView(String id, String name, List<String> baseModels) {
    }

    public record Claim(Claimed job, String token, List<FileView> baseFiles) {
    }

    @Transactional
    public WorkerView register(String name, List<String> baseModels) {
        access.serverAdmin();
        List<Violation> problems = new ArrayList<>();
        for (int i = 0; i < baseModels.size(); i++) {
            if (!trainable.worker(baseModels.get(i))) {
                problems.add(Violation
                        .of("Not a worker base model (fulcrum.training.worker-base-models, or a catalog model marked "
                                + "trainable): " + baseModels.get(i), "value_error", "body", "base_models", i));
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        String id = "worker-" + name;
        upserts.register(id, name, baseModels, access.caller().userId());
        return new WorkerView(id, name, List.copyOf(baseModels));
    }

    /** A registered worker; 404 for an unknown one. */
    @Transactional
    public WorkerView worker(String id) {
        TrainingWorker worker = TrainingWorker.<TrainingWorker> find("id = ?1 and kind = 'gpu'", id)
                .firstResultOptional().orElseThrow(() -> ApiException.notFound("Worker " + id + " not found"));
        return new WorkerView(worker.id, worker.name, List.copyOf(worker.baseModels));
    }

    /** The next job of the worker's base models, waiting up to {@code wait} seconds; null when none came. */
    public Claim claim(String workerId, Integer wait, BooleanSupplier listening) {
        access.serverAdmin();
        if (wait != null && (wait < 0 || wait > 60)) {
            throw ApiException.invalid(Violation.of("Must be between 0 and 60", "less_than_equal", "query", "wait"));
        }
        WorkerView worker = worker(workerId);
        long waitMillis = Math.min(settings.claimWait().toMillis(), (wait == null ? 20 : wait) * 1000L);
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (listening.getAsBoolean()) {
            upserts.seen(worker.id(), "gpu", worker.name());
            Claimed job = queue.claim("gpu", worker.id(), worker.baseModels());
            if (job != null && !listening.getAsBoolean()) {
                queue.handBack(job.id(), job.attempt());
                return null;
            }
            if (job != null) {
                String token = jwt.sign(worker.id(), Map.of("job", job.id(), "attempt", job.attempt(), "scope", SCOPE),
                        settings.workerTokenLifetime());
                try {
                    List<FileView> files = artifacts.getVersion(job.model().entity(), job.model().project(),
                            job.model().name(), "step" + job.baseStep()).files();
                    return new Claim(job, token, files);
                } catch (ApiException e) { // the job's creator lost access to the model's project meanwhile
                    queue.fail(job.id(), job.attempt(), e.getMessage());
                    continue;
                }
            }
            if (System.nanoTime() >= deadline) {
                return null;
            }
            try {
                Thread.sleep(CLAIM_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    /**
     * The job of a job-scoped token, its lease renewed, with the job's creator as caller; 401 for a bad token or a
     * token of another job, 409 when the token's attempt no longer holds the job.
     */
    public Claimed job(String authorization, String jobId) {
        JsonWebToken token = jwt.verify(Authentication.bearer(authorization).orElseThrow(
                () -> ApiException.unauthorized("Send the job token of the claim: Authorization: Bearer <token>")));
        Object job = token.getClaim("job");
        Object attempt = token.getClaim("attempt");
        if (!SCOPE.equals(String.valueOf((Object) token.getClaim("scope"))) || job == null
                || !jobId.equals(job.toString()) || attempt == null) {
            throw ApiException.unauthorized("The token is not for training job " + jobId);
        }
        int number = Integer.parseInt(attempt.toString());
        try {
            queue.heartbeat(jobId, number);
        } catch (LeaseLost e) {
            throw ApiException.conflict(e.getMessage() + "; drop the job");
        }
        return queue.claimed(jobId);
    }

    public ObjectNode input(Claimed job) {
        ObjectNode input = JsonNodeFactory.instance.objectNode().put("kind", job.kind());
        input.set("config", job.config());
        if (job.kind().equals("rl")) {
            input.set("trajectory_groups", job.input().get("trajectory_groups"));
        } else {
            input.set("examples", job.input().get("examples"));
        }
        return input;
    }

    public FileView baseFile(Claimed job, String path) {
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        return artifacts.file(job.model().entity(), job.model().project(), job.model().name(), "step" + job.baseStep(),
                path);
    }

    public InputStream open(FileView file) {
        try {
            return blobs.open(file.digest(), 0, file.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public boolean event(Claimed job, String type, ObjectNode data) {
        if (type == null || !(type.equals("training_started") || type.equals("gradient_step"))) {
            throw ApiException
                    .invalid(Violation.of("Must be training_started or gradient_step", "enum", "body", "type"));
        }
        ObjectNode kept = data == null ? JsonNodeFactory.instance.objectNode() : data;
        for (JsonNode value : kept) {
            if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
                throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "data"));
            }
        }
        try {
            return queue.event(job.id(), job.attempt(), type, kept);
        } catch (LeaseLost e) {
            throw ApiException.conflict(e.getMessage() + "; drop the job");
        }
    }

    /**
     * Stores a file of the checkpoint a job attempt makes, streamed from the request as it arrives: no transaction is
     * open while it arrives; the file's row is then written in its own.
     */
    public FileView upload(Claimed job, String path, InputStream body) {
        if (path == null || path.length() > 512 || !PATH.matcher(path).matches() || dotSegment(path)) {
            throw ApiException.invalid(Violation.of(
                    "Must be a relative file path of letters, digits, '_', '.', '-' and '/', without '.' or '..' segments",
                    path == null ? "missing" : "value_error", "query", "path"));
        }
        // the checkpoint is written out as a directory when it is served: a path may not be a file and a directory
        List<String> uploaded = TrainingJobFile
                .<TrainingJobFile> find("jobId = ?1 and attempt = ?2", job.id(), job.attempt()).stream()
                .map(file -> file.path).toList();
        String clash = FileTree.clash(uploaded, path);
        if (clash != null) {
            throw ApiException.invalid(Violation.of(clash, "value_error", "query", "path"));
        }
        if (body == null) {
            throw ApiException.invalid(Violation.of("The file content is required", "missing", "body"));
        }
        BlobStore.Blob blob;
        try {
            blob = checksums.put(body, settings.maxCheckpointFileBytes()).blob();
        } catch (BlobStore.TooLarge e) {
            throw ApiException
                    .payloadTooLarge("The file is larger than " + settings.maxCheckpointFileBytes() + " bytes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        upserts.file(job.id(), job.attempt(), path, blob.digest(), blob.size());
        return new FileView(path, blob.size(), blob.digest(), "application/octet-stream");
    }

    /** Whether a segment is {@code .} or {@code ..}: files are named by their place in the tree, once. */
    private static boolean dotSegment(String path) {
        for (String segment : path.split("/")) {
            if (segment.equals(".") || segment.equals("..")) {
                return true;
            }
        }
        return false;
    }

    public TrainingJobs.JobView finish(Claimed job, Map<String, Double> metrics) {
        List<TrainingJobFile> rows = TrainingJobFile
                .find("jobId = ?1 and attempt = ?2", Sort.by("path"), job.id(), job.attempt()).list();
        if (rows.isEmpty()) {
            throw ApiException
                    .invalid(Violation.of("Upload the checkpoint's files before finishing", "missing", "body"));
        }
        // uploads racing each other pass the upload's check together; one tree is checked again as a whole
        String clash = FileTree.clash(rows.stream().map(file -> file.path).collect(Collectors.toSet()));
        if (clash != null) {
            throw ApiException.invalid(
                    Violation.of(clash + "; upload the checkpoint again as one directory tree", "value_error", "body"));
        }
        // the uploads are in the blob store already: they become the checkpoint's files as they are
        List<StoredFile> files = rows.stream().map(file -> new StoredFile(file.path, file.digest, file.size)).toList();
        try {
            queue.succeed(job, files, metrics == null ? Map.of() : metrics);
        } catch (LeaseLost e) {
            throw ApiException.conflict(e.getMessage() + "; drop the job");
        }
        return jobs.get(job.id(), Role.VIEWER);
    }

    public TrainingJobs.JobView fail(Claimed job, String message) {
        if (message == null || message.isBlank()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "error_message"));
        }
        try {
            queue.fail(job.id(), job.attempt(), message.length() > 4000 ? message.substring(0, 4000) : message);
        } catch (LeaseLost e) {
            throw ApiException.conflict(e.getMessage() + "; drop the job");
        }
        return jobs.get(job.id(), Role.VIEWER);
    }

    /** Renews the lease; true when a cancel was requested. */
    public boolean heartbeat(Claimed job) {
        try {
            return queue.heartbeat(job.id(), job.attempt());
        } catch (LeaseLost e) {
            throw ApiException.conflict(e.getMessage() + "; drop the job");
        }
    }
}

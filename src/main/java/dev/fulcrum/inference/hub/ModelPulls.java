package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.transaction.Transactional.TxType;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;

import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.hub.HubClient.Transfer;
import dev.fulcrum.inference.hub.HubException.Reason;

/**
 * The pulls of models by name: planned at once (the commit and files, so that a wrong name is answered), then
 * downloaded in the background on threads of their own, each file to {@code partial/} and, once its sha256 is the one
 * the Hub states, moved to {@code blobs/sha256-<hex>.gguf} (parts of a split GGUF as
 * {@code sha256-<hex of the first part>-0000i-of-0000N.gguf}, the names llama.cpp finds the parts by). Two models of
 * one file share it; a file no pull names any more is deleted. A pull's row survives a restart, and pulls not finished
 * are resumed at start-up from the bytes their partial file holds.
 */
@ApplicationScoped
public class ModelPulls {

    private static final Logger LOG = Logger.getLogger(ModelPulls.class);
    private static final TypeReference<List<HubFile>> FILES = new TypeReference<>() {
    };
    private static final long PERSIST_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** {@code MODEL_PULL_PROGRESS}: at most one a second; at each tenth of the bytes, a change of state, or 30 s. */
    private static final long EVENT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long EVENT_AT_LEAST_NANOS = TimeUnit.SECONDS.toNanos(30);

    @Inject
    InferenceConfig config;

    @Inject
    ObjectMapper json;

    @Inject
    Event<PullFinished> finished;

    @Inject
    PlatformEvents events;

    private HubClient hub;
    private ExecutorService pool;
    private Path blobs;
    private Path partial;
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    private final Map<String, Object> fileLocks = new ConcurrentHashMap<>();
    /** Held while files move into the store or are deleted from it. */
    private final Object store = new Object();

    /** A pull under way on this replica: its progress lives here, the row is written about once a second. */
    private static final class Running {
        final Transfer transfer = new Transfer();
        volatile Future<?> future;
        volatile String state = PullStatus.QUEUED;
        volatile long completed;
        volatile Long total;
        volatile double speed;
        long sampledAt = System.nanoTime();
        long sampledBytes;
        long persistedAt;
        volatile String name;
        volatile String revision;
        volatile String commit;
        long eventAt = System.nanoTime() - EVENT_EVERY_NANOS;
        long eventTenth = -1;
        String eventState;
    }

    @PostConstruct
    void init() {
        InferenceConfig.Hub settings = config.hub();
        hub = new HubClient(settings.endpoint(), settings.token().orElse(System.getenv("HF_TOKEN")),
                settings.connectTimeout(), settings.readTimeout(), settings.retries(), settings.retryDelay(),
                settings.maxRetryDelay(), json);
        AtomicInteger threads = new AtomicInteger();
        pool = Executors.newFixedThreadPool(Math.max(1, settings.parallelPulls()), r -> {
            Thread thread = new Thread(r, "model-pull-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        blobs = settings.modelDir().resolve("blobs");
        partial = settings.modelDir().resolve("partial");
    }

    void start(@Observes StartupEvent event) {
        try {
            pullConfigured();
            resumeUnfinished();
        } catch (RuntimeException e) {
            LOG.warn("Could not resume the pulls of models", e);
        }
    }

    @PreDestroy
    void stop() {
        suspendAll();
        pool.shutdownNow();
        hub.close();
    }

    /** The Hub's address, for messages. */
    public String endpoint() {
        return hub.endpoint();
    }

    /** The commit and files a name means at a revision; fails with what the Hub answered, in words. */
    public HubPlan plan(HubName name, String revision) {
        return hub.plan(name, revision);
    }

    /** Records a planned pull of a model (in the caller's transaction); {@link #begin} starts it after the commit. */
    @Transactional(TxType.MANDATORY)
    public void record(String modelId, String source, HubPlan plan) {
        ModelPull pull = new ModelPull();
        pull.modelId = modelId;
        pull.source = source;
        pull.name = plan.name().toString();
        pull.revision = plan.revision();
        pull.commitSha = plan.commit();
        pull.files = write(plan.files());
        pull.state = PullStatus.QUEUED;
        pull.totalBytes = plan.totalBytes();
        pull.updatedAt = OffsetDateTime.now();
        pull.persist();
    }

    /** Starts (or resumes) a model's pull in the background. */
    public void begin(String modelId) {
        Running run = new Running();
        if (running.putIfAbsent(modelId, run) != null) {
            return;
        }
        run.future = pool.submit(() -> pull(modelId, run));
    }

    /** A model's pull, live when it runs here. */
    public Optional<PullStatus> status(String modelId) {
        ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
        if (row == null) {
            return Optional.empty();
        }
        Running run = running.get(modelId);
        List<String> files = read(row.files).stream().map(HubFile::path).toList();
        if (run != null) {
            // live until the catalog has taken the outcome in: a pull shown ready is served
            return Optional.of(new PullStatus(row.name, row.revision, row.commitSha, files, run.state, run.completed,
                    run.total != null ? run.total : row.totalBytes,
                    PullStatus.DOWNLOADING.equals(run.state) ? run.speed : null, null));
        }
        return Optional.of(new PullStatus(row.name, row.revision, row.commitSha, files, row.state, row.completedBytes,
                row.totalBytes, null, row.error));
    }

    /** A pull's progress in words when it runs here, without touching the database (for the event loop); else null. */
    public String progress(String modelId) {
        Running run = running.get(modelId);
        if (run == null) {
            return null;
        }
        return new PullStatus(null, null, null, List.of(), run.state, run.completed, run.total, null, null).progress();
    }

    /** Every pull's state, by model id (for the catalog's refresh: one statement). */
    public Map<String, Pulled> pulled() {
        Map<String, Pulled> all = new HashMap<>();
        for (ModelPull row : QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> listAll())) {
            all.put(row.modelId, new Pulled(row.name, row.revision, row.state, row.ggufPath));
        }
        return all;
    }

    /** A pull as the catalog needs it: the name and revision asked for, its state and, once ready, the file. */
    public record Pulled(String name, String revision, String state, String ggufPath) {
    }

    /**
     * Forgets a model's pull (in the caller's transaction): stops its download; {@link #freeUnused} then deletes the
     * files no other pull names.
     */
    @Transactional(TxType.MANDATORY)
    public void forget(String modelId) {
        Running run = running.remove(modelId);
        if (run != null) {
            cancel(run);
        }
        ModelPull.deleteById(modelId);
    }

    /** Deletes the stored and partial files that no pull names (after a model's deletion committed). */
    public void freeUnused() {
        synchronized (store) {
            List<ModelPull> rows = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> listAll());
            Set<String> kept = new HashSet<>();
            for (ModelPull row : rows) {
                List<HubFile> files = read(row.files);
                for (int i = 0; i < files.size(); i++) {
                    kept.add(blobName(files, i));
                    kept.add(partName(row, files.get(i)));
                }
            }
            for (Path dir : List.of(blobs, partial)) {
                if (!Files.isDirectory(dir)) {
                    continue;
                }
                try (Stream<Path> listed = Files.list(dir)) {
                    for (Path file : listed.toList()) {
                        if (!kept.contains(file.getFileName().toString())) {
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
     * Records the pulls of the configuration's models that are not ready, for {@link #resumeUnfinished} to start: new
     * ones, those whose name or revision changed, those that failed (tried again at each start) and those whose file is
     * gone.
     */
    void pullConfigured() {
        config.models().forEach(
                (id, settings) -> settings.pull().ifPresent(pull -> pullConfigured(id, pull, settings.revision())));
    }

    /** The row of one configured model's pull (see {@link #pullConfigured()}). */
    void pullConfigured(String id, String pull, String revision) {
        HubName name = HubName.parse(pull);
        String wanted = name == null ? pull : name.toString();
        QuarkusTransaction.requiringNew().run(() -> {
            ModelPull row = ModelPull.findById(id);
            if (row != null && row.name.equals(wanted) && row.revision.equals(revision)) {
                if (PullStatus.FAILED.equals(row.state) || PullStatus.READY.equals(row.state)
                        && (row.ggufPath == null || !Files.exists(Path.of(row.ggufPath)))) {
                    row.state = PullStatus.QUEUED;
                    row.error = null;
                    row.completedBytes = 0;
                    row.updatedAt = OffsetDateTime.now();
                }
                return;
            }
            if (row != null) {
                row.delete();
                ModelPull.getEntityManager().flush();
            }
            ModelPull fresh = new ModelPull();
            fresh.modelId = id;
            fresh.source = "config";
            fresh.name = wanted;
            fresh.revision = revision;
            fresh.files = "[]";
            fresh.state = PullStatus.QUEUED;
            fresh.updatedAt = OffsetDateTime.now();
            fresh.persist();
        });
    }

    /** Resumes every pull that had not finished (what a restart does). */
    void resumeUnfinished() {
        List<String> unfinished = QuarkusTransaction.requiringNew()
                .call(() -> ModelPull.<ModelPull> list("state not in ?1", List.of(PullStatus.READY, PullStatus.FAILED))
                        .stream().map(row -> row.modelId).toList());
        unfinished.forEach(this::begin);
    }

    /** Stops every download under way, leaving the rows and partial files as a crash would. */
    void suspendAll() {
        for (String id : List.copyOf(running.keySet())) {
            Running run = running.remove(id);
            if (run != null) {
                cancel(run);
            }
        }
    }

    private static void cancel(Running run) {
        run.transfer.cancel();
        Future<?> future = run.future;
        if (future != null) {
            future.cancel(true);
            try {
                future.get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                // cancelled, or done: either way it no longer writes
            }
        }
    }

    private void pull(String modelId, Running run) {
        try {
            ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
            if (row == null) {
                return;
            }
            if (row.commitSha == null) {
                HubName name = HubName.parse(row.name);
                if (name == null) {
                    throw new HubException(Reason.NOT_FOUND,
                            "Not a model name: " + row.name + " (write " + HubName.FORM + ")");
                }
                HubPlan plan = hub.plan(name, row.revision);
                QuarkusTransaction.requiringNew().run(() -> {
                    ModelPull r = ModelPull.findById(modelId);
                    if (r != null) {
                        r.commitSha = plan.commit();
                        r.files = write(plan.files());
                        r.totalBytes = plan.totalBytes();
                    }
                });
                row.commitSha = plan.commit();
                row.files = write(plan.files());
            }
            List<HubFile> files = read(row.files);
            HubName name = HubName.parse(row.name);
            long total = files.stream().mapToLong(HubFile::size).sum();
            run.total = total;
            run.name = row.name;
            run.revision = row.revision;
            run.commit = row.commitSha;
            long done = 0;
            String first = null;
            for (int i = 0; i < files.size(); i++) {
                Path blob = fetch(modelId, row, name, files, i, run, done);
                if (i == 0) {
                    first = blob.toString();
                }
                done += files.get(i).size();
                run.completed = done;
            }
            String file = first;
            boolean kept = QuarkusTransaction.requiringNew().call(() -> {
                ModelPull r = ModelPull.findById(modelId);
                if (r == null) {
                    return false;
                }
                r.state = PullStatus.READY;
                r.completedBytes = total;
                r.totalBytes = total;
                r.error = null;
                r.ggufPath = file;
                r.updatedAt = OffsetDateTime.now();
                return true;
            });
            if (kept) {
                LOG.infof("Pulled %s for model %s: %s", row.name, modelId, file);
                ObjectNode payload = payload(modelId, run);
                ArrayNode paths = payload.putArray("files");
                ArrayNode digests = payload.putArray("sha256");
                files.forEach(f -> {
                    paths.add(f.path());
                    digests.add(f.sha256());
                });
                payload.put("gguf_path", file);
                payload.put("total_bytes", total);
                event(EventType.MODEL_PULL_COMPLETED, payload);
                finished.fire(new PullFinished(modelId, true));
                running.remove(modelId, run);
            } else {
                running.remove(modelId, run);
                freeUnused();
            }
        } catch (CancellationException e) {
            // stopped: the row and the partial file stay for a resume
        } catch (HubException e) {
            fail(modelId, run, e.getMessage());
        } catch (RuntimeException e) {
            if (run.transfer.cancelled()) {
                return;
            }
            LOG.errorf(e, "The pull of model %s failed", modelId);
            fail(modelId, run, "The pull failed: " + e);
        }
    }

    private void fail(String modelId, Running run, String error) {
        LOG.warnf("The pull of model %s failed: %s", modelId, error);
        if (run.name == null) {
            ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
            if (row != null) {
                run.name = row.name;
                run.revision = row.revision;
            }
        }
        event(EventType.MODEL_PULL_FAILED, payload(modelId, run).put("error", error));
        QuarkusTransaction.requiringNew()
                .run(() -> ModelPull.update(
                        "state = ?1, error = ?2, completedBytes = ?3, updatedAt = ?4 where modelId = ?5",
                        PullStatus.FAILED, error, run.completed, OffsetDateTime.now(), modelId));
        finished.fire(new PullFinished(modelId, false));
        running.remove(modelId, run);
    }

    /** One file into the store: already there, or downloaded, checked and moved in. */
    private Path fetch(String modelId, ModelPull row, HubName name, List<HubFile> files, int index, Running run,
            long done) {
        HubFile file = files.get(index);
        Path blob = blobs.resolve(blobName(files, index));
        Object lock = fileLocks.computeIfAbsent(blob.getFileName().toString(), k -> new Object());
        synchronized (lock) {
            if (Files.exists(blob)) {
                return blob;
            }
            try {
                Files.createDirectories(partial);
                Files.createDirectories(blobs);
            } catch (IOException e) {
                throw new HubException(Reason.NO_SPACE, "Cannot create " + partial + ": " + e.getMessage(), e);
            }
            Path part = partial.resolve(partName(row, file));
            run.state = PullStatus.DOWNLOADING;
            hub.download(name, row.revision, row.commitSha, file, part, run.transfer,
                    have -> progress(modelId, run, done + have));
            run.state = PullStatus.VERIFYING;
            persist(modelId, run, true);
            progressEvent(modelId, run);
            String expected = file.sha256() != null ? file.sha256() : run.transfer.linkedSha256;
            if (expected == null) {
                throw new HubException(Reason.BAD_FILE, "The Hub states no sha256 for " + file.path() + " of "
                        + name.repo() + "; Fulcrum uses no file it cannot check");
            }
            String actual = sha256(part);
            if (!actual.equals(expected)) {
                delete(part);
                throw new HubException(Reason.BAD_FILE, "The sha256 of " + file.path() + " as downloaded is " + actual
                        + ", the Hub states " + expected + ": the file was deleted");
            }
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
            return blob;
        }
    }

    private void progress(String modelId, Running run, long completed) {
        run.completed = completed;
        long now = System.nanoTime();
        long elapsed = now - run.sampledAt;
        if (elapsed >= PERSIST_EVERY_NANOS / 2) {
            double recent = (completed - run.sampledBytes) * 1e9 / elapsed;
            run.speed = run.speed == 0 ? recent : 0.5 * run.speed + 0.5 * recent;
            run.sampledAt = now;
            run.sampledBytes = completed;
        }
        persist(modelId, run, false);
        progressEvent(modelId, run);
    }

    /** A {@code MODEL_PULL_PROGRESS} event when one is due (see {@link #EVENT_EVERY_NANOS}). */
    private void progressEvent(String modelId, Running run) {
        long now = System.nanoTime();
        Long total = run.total;
        long tenth = total == null || total == 0 ? 0 : run.completed * 10 / total;
        String state = run.state;
        if (now - run.eventAt < EVENT_EVERY_NANOS || tenth == run.eventTenth && state.equals(run.eventState)
                && now - run.eventAt < EVENT_AT_LEAST_NANOS) {
            return;
        }
        run.eventAt = now;
        run.eventTenth = tenth;
        run.eventState = state;
        ObjectNode payload = payload(modelId, run).put("state", state).put("completed_bytes", run.completed);
        if (total == null) {
            payload.putNull("total_bytes");
        } else {
            payload.put("total_bytes", total);
        }
        payload.put("bytes_per_second", Math.round(run.speed));
        event(EventType.MODEL_PULL_PROGRESS, payload);
    }

    private ObjectNode payload(String modelId, Running run) {
        ObjectNode payload = json.createObjectNode().put("model_id", modelId).put("name", run.name).put("revision",
                run.revision);
        if (run.commit != null) {
            payload.put("commit", run.commit);
        }
        return payload;
    }

    /** Writes a server event in a transaction of its own; an event that cannot be written never fails a pull. */
    private void event(EventType type, ObjectNode payload) {
        try {
            QuarkusTransaction.requiringNew().run(() -> events.recordServer(type, payload));
        } catch (RuntimeException e) {
            LOG.warnf("Could not write the event %s of a model pull: %s", type, e.getMessage());
        }
    }

    /** Writes the progress to the row at most once a second (or now), so that a restart or another replica sees it. */
    private void persist(String modelId, Running run, boolean now) {
        long at = System.nanoTime();
        if (!now && at - run.persistedAt < PERSIST_EVERY_NANOS) {
            return;
        }
        run.persistedAt = at;
        String state = run.state;
        long completed = run.completed;
        QuarkusTransaction.requiringNew()
                .run(() -> ModelPull.update("state = ?1, completedBytes = ?2, updatedAt = ?3 where modelId = ?4", state,
                        completed, OffsetDateTime.now(), modelId));
    }

    /** A stored file's name: by the sha256 of the file, or of the first part of a split one. */
    private static String blobName(List<HubFile> files, int index) {
        HubFile first = files.get(0);
        String digest = "sha256-" + (first.sha256() != null ? first.sha256() : "unknown");
        int[] split = HubFiles.split(files.get(index).path());
        return split == null ? digest + ".gguf" : "%s-%05d-of-%05d.gguf".formatted(digest, split[0], split[1]);
    }

    private static String partName(ModelPull row, HubFile file) {
        return (file.sha256() != null ? "sha256-" + file.sha256()
                : row.commitSha + "-" + file.path().replaceAll("[^A-Za-z0-9._-]", "_")) + ".part";
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

    private String write(List<HubFile> files) {
        try {
            return json.writeValueAsString(files);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<HubFile> read(String files) {
        try {
            return files == null ? List.of() : new ArrayList<>(json.readValue(files, FILES));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A pull's file list is not JSON", e);
        }
    }
}

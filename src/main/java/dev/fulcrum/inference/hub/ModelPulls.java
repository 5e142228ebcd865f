package dev.fulcrum.inference.hub;

import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;

import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.hub.HubDownloads.Transfer;
import dev.fulcrum.inference.hub.HubException.Reason;

/**
 * The pulls of models by name: planned at once (the commit and files, so that a wrong name is answered), then
 * downloaded in the background on threads of their own into the store of {@link PulledFiles}, their progress told by
 * {@link PullProgress}. A pull's row survives a restart, and pulls not finished are resumed at start-up from the bytes
 * their partial file holds.
 */
@ApplicationScoped
public class ModelPulls {

    private static final Logger LOG = Logger.getLogger(ModelPulls.class);
    private static final TypeReference<List<HubFile>> FILES = new TypeReference<>() {
    };

    @Inject
    InferenceConfig config;

    @Inject
    ObjectMapper json;

    @Inject
    Event<PullFinished> finished;

    @Inject
    PlatformEvents events;

    private HubHttp http;
    private HubClient hub;
    private HubDownloads downloads;
    private PulledFiles store;
    private ExecutorService pool;
    private final Map<String, Running> running = new ConcurrentHashMap<>();

    /** A pull under way on this replica. */
    private static final class Running {
        final Transfer transfer = new Transfer();
        final PullProgress progress;
        volatile Future<?> future;

        Running(PullProgress progress) {
            this.progress = progress;
        }
    }

    @PostConstruct
    void init() {
        InferenceConfig.Hub settings = config.hub();
        http = new HubHttp(settings.endpoint(), settings.token().orElse(System.getenv("HF_TOKEN")),
                settings.connectTimeout(), settings.readTimeout(), settings.retries(), settings.retryDelay(),
                settings.maxRetryDelay());
        hub = new HubClient(http, json);
        downloads = new HubDownloads(http);
        store = new PulledFiles(settings.modelDir());
        AtomicInteger threads = new AtomicInteger();
        pool = Executors.newFixedThreadPool(Math.max(1, settings.parallelPulls()), r -> {
            Thread thread = new Thread(r, "model-pull-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
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
        downloads.close();
        http.close();
    }

    /** The Hub's address, for messages. */
    public String endpoint() {
        return http.endpoint().toString();
    }

    /**
     * The commit and files a name means at a revision; fails with what the Hub answered, in words, or {@code NO_SPACE}
     * when the files cannot fit on the disk of the model directory.
     */
    public HubPlan plan(HubName name, String revision) {
        HubPlan plan = hub.plan(name, revision);
        store.checkRoom(plan.commit(), plan.files());
        return plan;
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
        Running run = new Running(new PullProgress(modelId, events, json));
        if (running.putIfAbsent(modelId, run) != null) {
            return;
        }
        run.future = pool.submit(() -> pull(modelId, run));
    }

    /** What {@link #retry} did. */
    public enum Retry {
        /** The pull is queued again; {@link #begin} starts it. */
        QUEUED,
        /** The model was not pulled by name. */
        NO_PULL,
        /** The pull did not fail: it is under way, or ready. */
        NOT_FAILED
    }

    /**
     * Queues a failed pull again (resuming from its partial files), once even when replicas ask at the same moment:
     * only the one whose update finds the row failed queues it. Fails {@code NO_SPACE} when the files cannot fit.
     */
    public Retry retry(String modelId) {
        ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
        if (row == null) {
            return Retry.NO_PULL;
        }
        if (!PullStatus.FAILED.equals(row.state)) {
            return Retry.NOT_FAILED;
        }
        if (row.commitSha != null) {
            store.checkRoom(row.commitSha, read(row.files));
        }
        int queued = QuarkusTransaction.requiringNew()
                .call(() -> ModelPull.update(
                        "state = ?1, error = null, updatedAt = ?2 where modelId = ?3 and state = ?4", PullStatus.QUEUED,
                        OffsetDateTime.now(), modelId, PullStatus.FAILED));
        return queued == 1 ? Retry.QUEUED : Retry.NOT_FAILED;
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
            return Optional.of(run.progress.status(row, files));
        }
        return Optional.of(new PullStatus(row.name, row.revision, row.commitSha, files, row.state, row.completedBytes,
                row.totalBytes, null, row.error));
    }

    /** A pull's progress in words when it runs here, without touching the database (for the event loop); else null. */
    public String progress(String modelId) {
        Running run = running.get(modelId);
        return run == null ? null : run.progress.words();
    }

    /**
     * Every pull's state, by model id, as this replica serves it (for the catalog's refresh: one statement). A pull
     * ready on another replica whose files this one lacks (a model directory of its own) is copied here: queued, with
     * no file, until the copy is stored.
     */
    public Map<String, Pulled> pulled() {
        Map<String, Pulled> all = new HashMap<>();
        for (ModelPull row : QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> listAll())) {
            String state = row.state;
            String file = null;
            if (PullStatus.READY.equals(state)) {
                List<HubFile> files = read(row.files);
                if (store.holds(row.commitSha, files)) {
                    file = store.blob(row.commitSha, files, 0).toString();
                } else {
                    state = PullStatus.QUEUED;
                    begin(row.modelId);
                }
            }
            all.put(row.modelId, new Pulled(row.name, row.revision, state, file));
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
        store.freeUnused(() -> {
            Set<String> kept = new HashSet<>();
            for (ModelPull row : QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> listAll())) {
                PulledFiles.names(row.commitSha, read(row.files)).forEach(kept::add);
            }
            return kept;
        });
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
                // a ready one whose file this replica lacks is copied by pulled(), the row left as the others see it
                if (PullStatus.FAILED.equals(row.state)) {
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
        PullProgress progress = run.progress;
        try {
            ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
            if (row == null) {
                return;
            }
            if (row.commitSha == null) {
                plan(modelId, row);
            }
            List<HubFile> files = read(row.files);
            HubName name = HubName.parse(row.name);
            long total = files.stream().mapToLong(HubFile::size).sum();
            progress.of(row.name, row.revision, row.commitSha, total);
            if (PullStatus.READY.equals(row.state)) {
                progress.untold(); // a copy onto this replica of a pull ready on another
            }
            store.checkRoom(row.commitSha, files);
            long done = 0;
            String first = null;
            for (int i = 0; i < files.size(); i++) {
                long before = done;
                HubFile file = files.get(i);
                Path blob = store.store(files, i, row.commitSha, name.repo(), part -> {
                    progress.downloading();
                    downloads.download(name, row.revision, row.commitSha, file, part, run.transfer,
                            have -> progress.bytes(before + have));
                    progress.verifying();
                    return file.sha256() != null ? file.sha256() : run.transfer.linkedSha256;
                });
                if (i == 0) {
                    first = blob.toString();
                }
                done += file.size();
                progress.bytes(done);
            }
            if (ready(modelId, first, total)) {
                LOG.infof("Pulled %s for model %s: %s", row.name, modelId, first);
                if (progress.told()) {
                    progress.completed(files, first);
                }
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

    /** The commit and files of a pull recorded by name only (one of the configuration), asked of the Hub now. */
    private void plan(String modelId, ModelPull row) {
        HubName name = HubName.parse(row.name);
        if (name == null) {
            throw new HubException(Reason.NOT_FOUND, "Not a model name: " + row.name + " (write " + HubName.FORM + ")");
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

    /** Marks a pull ready with its file; false when its model was deleted meanwhile. */
    private static boolean ready(String modelId, String file, long total) {
        return QuarkusTransaction.requiringNew().call(() -> {
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
    }

    private void fail(String modelId, Running run, String error) {
        LOG.warnf("The pull of model %s failed: %s", modelId, error);
        if (!run.progress.told()) {
            running.remove(modelId, run); // a copy: the catalog's next refresh tries again
            return;
        }
        if (!run.progress.named()) {
            ModelPull row = QuarkusTransaction.requiringNew().call(() -> ModelPull.<ModelPull> findById(modelId));
            if (row != null) {
                run.progress.of(row.name, row.revision, null, null);
            }
        }
        run.progress.failed(error);
        finished.fire(new PullFinished(modelId, false));
        running.remove(modelId, run);
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

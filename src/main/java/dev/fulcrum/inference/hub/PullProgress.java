package dev.fulcrum.inference.hub;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;

/**
 * The progress of one pull under way on this replica: held in memory (what the API shows live), written to the pull's
 * row about once a second (so that a restart or another replica sees it) and told as platform events, throttled:
 * {@code MODEL_PULL_PROGRESS} at most once a second, at each tenth of the bytes, a change of state, or every 30 s; then
 * {@code MODEL_PULL_COMPLETED} or {@code MODEL_PULL_FAILED}.
 */
final class PullProgress {

    private static final Logger LOG = Logger.getLogger(PullProgress.class);
    private static final long PERSIST_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long EVENT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long EVENT_AT_LEAST_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final String modelId;
    private final PlatformEvents events;
    private final ObjectMapper json;

    /** False for a copy of a ready pull onto this replica: the row and the events are the first pull's. */
    private volatile boolean told = true;
    private volatile String state = PullStatus.QUEUED;
    private volatile long completed;
    private volatile Long total;
    private volatile double speed;
    private volatile String name;
    private volatile String revision;
    private volatile String commit;
    private long sampledAt = System.nanoTime();
    private long sampledBytes;
    private long persistedAt;
    private long eventAt = System.nanoTime() - EVENT_EVERY_NANOS;
    private long eventTenth = -1;
    private String eventState;

    PullProgress(String modelId, PlatformEvents events, ObjectMapper json) {
        this.modelId = modelId;
        this.events = events;
        this.json = json;
    }

    /** What is pulled, for the events: known once the pull's row is read. */
    void of(String name, String revision, String commit, Long total) {
        this.name = name;
        this.revision = revision;
        this.commit = commit;
        if (total != null) {
            this.total = total;
        }
    }

    /** This replica copies a pull that is ready elsewhere: neither its row nor the events hear of it. */
    void untold() {
        told = false;
    }

    boolean told() {
        return told;
    }

    boolean named() {
        return name != null;
    }

    String state() {
        return state;
    }

    long completed() {
        return completed;
    }

    /** The status as the API shows it live, the row giving what is not held here. */
    PullStatus status(ModelPull row, List<String> files) {
        return new PullStatus(row.name, row.revision, row.commitSha, files, state, completed,
                total != null ? total : row.totalBytes, PullStatus.DOWNLOADING.equals(state) ? speed : null, null);
    }

    /** The progress in words, for the 503 of a completion asked of a model still pulling. */
    String words() {
        return new PullStatus(null, null, null, List.of(), state, completed, total, null, null).progress();
    }

    /** A file begins downloading. */
    void downloading() {
        state = PullStatus.DOWNLOADING;
    }

    /** The pull holds {@code bytes} of all its files: the speed sampled, the row written and an event told if due. */
    void bytes(long bytes) {
        completed = bytes;
        long now = System.nanoTime();
        long elapsed = now - sampledAt;
        if (elapsed >= PERSIST_EVERY_NANOS / 2) {
            double recent = (bytes - sampledBytes) * 1e9 / elapsed;
            speed = speed == 0 ? recent : 0.5 * speed + 0.5 * recent;
            sampledAt = now;
            sampledBytes = bytes;
        }
        persist(false);
        progressEvent();
    }

    /** A file is downloaded and its digest is being computed: written and told at once. */
    void verifying() {
        state = PullStatus.VERIFYING;
        persist(true);
        progressEvent();
    }

    /** The pull is ready: the event naming its files, their digests and the stored file. */
    void completed(List<HubFile> files, String file) {
        ObjectNode payload = payload();
        ArrayNode paths = payload.putArray("files");
        ArrayNode digests = payload.putArray("sha256");
        files.forEach(f -> {
            paths.add(f.path());
            digests.add(f.sha256());
        });
        payload.put("gguf_path", file);
        payload.put("total_bytes", files.stream().mapToLong(HubFile::size).sum());
        event(EventType.MODEL_PULL_COMPLETED, payload);
    }

    /** The pull failed: told, and written to its row with the error. */
    void failed(String error) {
        event(EventType.MODEL_PULL_FAILED, payload().put("error", error));
        long held = completed;
        QuarkusTransaction.requiringNew()
                .run(() -> ModelPull.update(
                        "state = ?1, error = ?2, completedBytes = ?3, updatedAt = ?4 where modelId = ?5",
                        PullStatus.FAILED, error, held, OffsetDateTime.now(), modelId));
    }

    /** A {@code MODEL_PULL_PROGRESS} event when one is due. */
    private void progressEvent() {
        long now = System.nanoTime();
        Long all = total;
        long tenth = all == null || all == 0 ? 0 : completed * 10 / all;
        String current = state;
        if (now - eventAt < EVENT_EVERY_NANOS
                || tenth == eventTenth && current.equals(eventState) && now - eventAt < EVENT_AT_LEAST_NANOS) {
            return;
        }
        eventAt = now;
        eventTenth = tenth;
        eventState = current;
        ObjectNode payload = payload().put("state", current).put("completed_bytes", completed);
        if (all == null) {
            payload.putNull("total_bytes");
        } else {
            payload.put("total_bytes", all);
        }
        payload.put("bytes_per_second", Math.round(speed));
        event(EventType.MODEL_PULL_PROGRESS, payload);
    }

    private ObjectNode payload() {
        ObjectNode payload = json.createObjectNode().put("model_id", modelId).put("name", name).put("revision",
                revision);
        if (commit != null) {
            payload.put("commit", commit);
        }
        return payload;
    }

    /** Writes a server event in a transaction of its own; an event that cannot be written never fails a pull. */
    private void event(EventType type, ObjectNode payload) {
        if (!told) {
            return;
        }
        try {
            QuarkusTransaction.requiringNew().run(() -> events.recordServer(type, payload));
        } catch (RuntimeException e) {
            LOG.warnf("Could not write the event %s of a model pull: %s", type, e.getMessage());
        }
    }

    /** Writes the progress to the row at most once a second (or now). */
    private void persist(boolean now) {
        long at = System.nanoTime();
        if (!told || !now && at - persistedAt < PERSIST_EVERY_NANOS) {
            return;
        }
        persistedAt = at;
        String current = state;
        long held = completed;
        QuarkusTransaction.requiringNew()
                .run(() -> ModelPull.update("state = ?1, completedBytes = ?2, updatedAt = ?3 where modelId = ?4",
                        current, held, OffsetDateTime.now(), modelId));
    }
}

package dev.fulcrum.training;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import org.hibernate.Timeouts;
import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.hibernate.orm.panache.PanacheQuery;
import io.quarkus.panache.common.Parameters;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * The job table as a queue. Executors claim the oldest queued job whose model has no running or earlier queued job
 * ({@code FOR UPDATE SKIP LOCKED}: a pessimistic lock that skips locked rows, so replicas never claim the same row),
 * holding it under a lease they renew with every event or heartbeat. Every later change names the attempt it belongs
 * to: an executor whose lease was lost (the job re-queued or failed meanwhile) can no longer change the job. State
 * changes are conditional updates with the database's clock.
 */
@ApplicationScoped
public class JobQueue {

    private static final Logger LOG = Logger.getLogger(JobQueue.class);
    private static final String LOCK_TIMEOUT = "jakarta.persistence.lock.timeout";

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    TrainingSettings settings;

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Inject
    Access access;

    @Inject
    TrainingMetrics metrics;

    /** A job as its executor sees it. */
    public record Claimed(String id, int attempt, String kind, ModelView model, int baseStep, ObjectNode input,
            ObjectNode config, long createdBy, OffsetDateTime leaseUntil) {
    }

    /** The columns of a running job that make its {@link Claimed}. */
    record Attempt(String id, int attempts, String kind, String modelId, Integer baseStep, String input, String config,
            Long createdBy, OffsetDateTime leaseUntil) {
    }

    /** The job moved on without this attempt: re-queued, failed, cancelled or deleted. */
    public static class LeaseLost extends RuntimeException {
        LeaseLost(String id) {
            super("The lease of training job " + id + " is no longer held", null, false, false);
        }
    }

    /**
     * Claims the next job of the executor kind ({@code cpu} or {@code gpu}), for one of {@code baseModels} when given.
     * Runs as the job's creator afterwards (the caller of this request context), so that checkpoints are written with
     * the creator's rights.
     */
    @Transactional
    public Claimed claim(String executor, String owner, List<String> baseModels) {
        if (baseModels != null && baseModels.isEmpty()) {
            return null;
        }
        Parameters params = Parameters.with("executor", executor);
        String ofBaseModels = "";
        if (baseModels != null) {
            ofBaseModels = " and j.modelId in (select m.id from TrainingModel m where m.baseModel in :baseModels)";
            params.and("baseModels", baseModels);
        }
        PanacheQuery<TrainingJob> next = TrainingJob.find("""
                from TrainingJob j where j.status = 'queued' and j.executor = :executor%s
                and not exists (from TrainingJob o where o.modelId = j.modelId
                    and (o.status = 'running' or (o.status = 'queued' and o.seq < j.seq)))
                order by j.seq""".formatted(ofBaseModels), params);
        TrainingJob job = skipLocked(next).firstResult();
        if (job == null) {
            return null;
        }
        actAs(job.createdBy);
        Integer base = checkpoints.latestStep(job.modelId);
        TrainingJob.update("""
                status = 'running', attempts = attempts + 1, leaseOwner = ?2, leaseUntil = ?3,
                startedAt = coalesce(startedAt, offset datetime), baseStep = ?4 where id = ?1""", job.id, owner,
                leaseEnd(), base == null ? 0 : base);
        metrics.claimed(job.id, executor);
        return claimed(job.id);
    }

    /** The rows of the query locked for this transaction, leaving out rows another transaction holds. */
    private static <T> PanacheQuery<T> skipLocked(PanacheQuery<T> query) {
        return query.withLock(LockModeType.PESSIMISTIC_WRITE).withHint(LOCK_TIMEOUT, Timeouts.SKIP_LOCKED_MILLI);
    }

    /** The end of a lease renewed now. */
    private OffsetDateTime leaseEnd() {
        return now().plus(settings.lease());
    }

    /** The database's clock (now() of this transaction), so that all replicas measure leases alike. */
    private OffsetDateTime now() {
        return em.createQuery("select offset datetime", OffsetDateTime.class).getSingleResult();
    }

    /** The job of a running attempt, with the creator as the caller of this request context. */
    @Transactional
    public Claimed claimed(String id) {
        Attempt job = TrainingJob.find("id", id).project(Attempt.class).firstResult();
        actAs(job.createdBy());
        ModelView model = models.modelForExecutor(job.modelId());
        return new Claimed(job.id(), job.attempts(), job.kind(), model, job.baseStep(),
                storedJson.readObject(job.input()), storedJson.readObject(job.config()), job.createdBy(),
                job.leaseUntil());
    }

    /** Makes the job's creator the caller of this request context. */
    void actAs(long userId) {
        access.actFor(userId);
    }

    /**
     * Renews the lease of the attempt; true when a cancel was requested.
     *
     * @throws LeaseLost
     *             when the attempt no longer holds the job
     */
    @Transactional
    public boolean heartbeat(String id, int attempt) {
        int renewed = TrainingJob.update("""
                leaseUntil = ?3 where id = ?1 and attempts = ?2 and status = 'running'""", id, attempt, leaseEnd());
        if (renewed == 0) {
            throw new LeaseLost(id);
        }
        return cancelRequested(id);
    }

    /** Records an event of the attempt and renews its lease; true when a cancel was requested. */
    @Transactional
    public boolean event(String id, int attempt, String type, ObjectNode data) {
        boolean cancel = heartbeat(id, attempt);
        insertEvent(id, type, data);
        metrics.event(id, type);
        return cancel;
    }

    void insertEvent(String id, String type, ObjectNode data) {
        TrainingJobEvent.of(id, type, storedJson.write(data)).persist();
    }

    /** Locks the attempt's job row; LeaseLost if the attempt no longer holds it. */
    private void lockAttempt(String id, int attempt) {
        TrainingJob.find("id = ?1 and attempts = ?2 and status = 'running'", id, attempt)
                .withLock(LockModeType.PESSIMISTIC_WRITE).firstResultOptional().orElseThrow(() -> new LeaseLost(id));
    }

    /**
     * Finishes the attempt: checkpoint {@code base + 1} from the files, the job succeeded, {@code training_ended}, in
     * one transaction. Fails the job instead when the model's latest checkpoint is no longer the one it started from.
     */
    @Transactional
    public int succeed(Claimed job, List<StoredFile> files, Map<String, Double> metrics) {
        lockAttempt(job.id(), job.attempt());
        models.lockModel(job.model().id());
        Integer latest = checkpoints.latestStep(job.model().id());
        if (latest == null || latest != job.baseStep()) {
            finish(job.id(), "failed", "The model's latest checkpoint changed while the job ran (step " + job.baseStep()
                    + " -> " + latest + ")", null);
            return -1;
        }
        if (cancelRequested(job.id())) {
            finish(job.id(), "cancelled", "Cancelled", null);
            return -1;
        }
        int step = job.baseStep() + 1;
        ObjectNode finalMetrics = JsonNodeFactory.instance.objectNode();
        metrics.forEach((name, value) -> {
            if (Double.isFinite(value)) {
                finalMetrics.put(name, value);
            }
        });
        checkpoints.addBlobs(job.model(), step, files, finalMetrics);
        finish(job.id(), "succeeded", null, step);
        ObjectNode data = finalMetrics.deepCopy();
        data.put("checkpoint_step", step);
        insertEvent(job.id(), "training_ended", data);
        return step;
    }

    private boolean cancelRequested(String id) {
        return em.createQuery("select cancelRequested from TrainingJob where id = :id", Boolean.class)
                .setParameter("id", id).getSingleResult();
    }

    /** Ends the attempt as failed, or as cancelled when a cancel was requested. */
    @Transactional
    public void fail(String id, int attempt, String message) {
        lockAttempt(id, attempt);
        if (cancelRequested(id)) {
            finish(id, "cancelled", "Cancelled", null);
        } else {
            finish(id, "failed", message, null);
        }
    }

    private void finish(String id, String status, String error, Integer step) {
        TrainingJob.update("""
                status = ?2, error = ?3, checkpointStep = ?4, finishedAt = offset datetime, leaseOwner = null,
                leaseUntil = null where id = ?1""", id, status, error, step);
        metrics.finished(id, status,
                () -> em.createQuery("select executor from TrainingJob where id = :id", String.class)
                        .setParameter("id", id).getSingleResult());
        if (!status.equals("succeeded")) {
            insertEvent(id, "training_failed", JsonNodeFactory.instance.objectNode().put("error_message", error));
        }
    }

    /**
     * Gives the job of the attempt back because this replica shuts down: queued again at once, for any executor, as
     * after a lost lease (the next attempt starts over from the latest checkpoint; the interrupted one made none) but
     * without waiting for the lease to end. A job with a pending cancel is cancelled instead.
     *
     * @throws LeaseLost
     *             when the attempt no longer holds the job
     */
    @Transactional
    public void release(String id, int attempt) {
        lockAttempt(id, attempt);
        if (cancelRequested(id)) {
            finish(id, "cancelled", "Cancelled", null);
        } else {
            TrainingJob.update("status = 'queued', leaseOwner = null, leaseUntil = null where id = ?1", id);
        }
    }

    /**
     * A job just claimed for a worker that went away before the claim could reach it (its connection closed during the
     * long poll): queued again as it was, the attempt not counted.
     */
    @Transactional
    public void handBack(String id, int attempt) {
        TrainingJob.update("""
                status = 'queued', attempts = attempts - 1, leaseOwner = null, leaseUntil = null
                where id = ?1 and status = 'running' and attempts = ?2""", id, attempt);
    }

    @Transactional
    void cancelQueued(String id) {
        finish(id, "cancelled", "Cancelled", null);
    }

    /**
     * Jobs whose executor stopped renewing the lease: queued again while attempts remain (the next attempt starts over
     * from the latest checkpoint; the lost attempt made none), failed otherwise; a job with a pending cancel is
     * cancelled. Returns how many jobs were moved.
     */
    @Transactional
    public int expireLeases() {
        List<TrainingJob> expired = skipLocked(
                TrainingJob.<TrainingJob> find("status = 'running' and leaseUntil < offset datetime")).list();
        for (TrainingJob job : expired) {
            metrics.leaseExpired(job.id, job.executor,
                    job.cancelRequested ? "cancelled" : job.attempts < settings.maxAttempts() ? "requeued" : "failed");
            if (job.cancelRequested) {
                finish(job.id, "cancelled", "Cancelled", null);
            } else if (job.attempts < settings.maxAttempts()) {
                LOG.infof("Training job %s lost its lease (attempt %d); queued again", job.id, job.attempts);
                TrainingJob.update("status = 'queued', leaseOwner = null, leaseUntil = null where id = ?1", job.id);
            } else {
                LOG.warnf("Training job %s lost its lease on attempt %d; failed", job.id, job.attempts);
                finish(job.id, "failed", "The executor stopped renewing the job's lease (attempt " + job.attempts
                        + " of " + settings.maxAttempts() + "); no checkpoint was made", null);
            }
        }
        return expired.size();
    }

    /** Queued jobs of an executor kind. */
    @Transactional
    public long depth(String executor) {
        return TrainingJob.count("status = 'queued' and executor = ?1", executor);
    }

    /** Executors or workers of a kind seen within the lease window. */
    @Transactional
    public long alive(String kind) {
        return TrainingWorker.count("kind = ?1 and lastSeen > ?2", kind, now().minus(settings.lease()));
    }
}

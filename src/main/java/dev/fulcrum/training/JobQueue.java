package dev.fulcrum.training;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.CurrentCaller;
import dev.fulcrum.platform.StoredJson;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * The job table as a queue. Executors claim the oldest queued job whose model has no running or earlier queued job
 * ({@code FOR UPDATE SKIP LOCKED}, so replicas never claim the same row), holding it under a lease they renew with
 * every event or heartbeat. Every later change names the attempt it belongs to: an executor whose lease was lost (the
 * job re-queued or failed meanwhile) can no longer change the job.
 */
@ApplicationScoped
public class JobQueue {

    private static final Logger LOG = Logger.getLogger(JobQueue.class);

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    TrainingSettings settings;

    @Inject
    TrainingModels models;

    @Inject
    CurrentCaller current;

    /** A job as its executor sees it. */
    public record Claimed(String id, int attempt, String kind, ModelView model, int baseStep, ObjectNode input,
            ObjectNode config, long createdBy, OffsetDateTime leaseUntil) {
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
        List<?> ids = em.createNativeQuery("""
                select j.id from training_jobs j join training_models m on m.id = j.model_id
                where j.status = 'queued' and j.executor = ?1
                and (cast(?2 as text[]) is null or m.base_model = any(cast(?2 as text[])))
                and not exists (select 1 from training_jobs o where o.model_id = j.model_id
                    and (o.status = 'running' or (o.status = 'queued' and o.seq < j.seq)))
                order by j.seq limit 1 for update of j skip locked""").setParameter(1, executor)
                .setParameter(2,
                        baseModels == null ? null
                                : "{" + String.join(",", baseModels.stream()
                                        .map(m -> "\"" + m.replace("\\", "\\\\").replace("\"", "\\\"") + "\"").toList())
                                        + "}")
                .getResultList();
        if (ids.isEmpty()) {
            return null;
        }
        String id = (String) ids.get(0);
        Object[] row = (Object[]) em.createNativeQuery("select model_id, created_by from training_jobs where id = ?1")
                .setParameter(1, id).getSingleResult();
        actAs(((Number) row[1]).longValue());
        Integer base = models.latestStep((String) row[0]);
        em.createNativeQuery("""
                update training_jobs set status = 'running', attempts = attempts + 1, lease_owner = ?2,
                lease_until = now() + cast(?3 as interval), started_at = coalesce(started_at, now()), base_step = ?4
                where id = ?1""").setParameter(1, id).setParameter(2, owner).setParameter(3, interval())
                .setParameter(4, base == null ? 0 : base).executeUpdate();
        return claimed(id);
    }

    private String interval() {
        return settings.lease().toMillis() + " milliseconds";
    }

    /** The job of a running attempt, with the creator as the caller of this request context. */
    @Transactional
    public Claimed claimed(String id) {
        Object[] r = (Object[]) em.createNativeQuery("""
                select j.id, j.attempts, j.kind, j.model_id, j.base_step, j.input::text, j.config::text,
                j.created_by, j.lease_until from training_jobs j where j.id = ?1""").setParameter(1, id)
                .getSingleResult();
        long creator = ((Number) r[7]).longValue();
        actAs(creator);
        ModelView model = models.modelForExecutor((String) r[3]);
        return new Claimed((String) r[0], ((Number) r[1]).intValue(), (String) r[2], model, ((Number) r[4]).intValue(),
                storedJson.readObject((String) r[5]), storedJson.readObject((String) r[6]), creator,
                TrainingModels.time(r[8]));
    }

    /** Makes the job's creator the caller of this request context. */
    void actAs(long userId) {
        Object[] user = (Object[]) em.createNativeQuery("select id, username, admin from users where id = ?1")
                .setParameter(1, userId).getSingleResult();
        current.authenticated(new Caller(userId, (String) user[1], (Boolean) user[2], 0));
    }

    /**
     * Renews the lease of the attempt; true when a cancel was requested.
     *
     * @throws LeaseLost
     *             when the attempt no longer holds the job
     */
    @Transactional
    public boolean heartbeat(String id, int attempt) {
        List<?> rows = em.createNativeQuery("""
                update training_jobs set lease_until = now() + cast(?3 as interval)
                where id = ?1 and attempts = ?2 and status = 'running' returning cancel_requested""")
                .setParameter(1, id).setParameter(2, attempt).setParameter(3, interval()).getResultList();
        if (rows.isEmpty()) {
            throw new LeaseLost(id);
        }
        return (Boolean) rows.get(0);
    }

    /** Records an event of the attempt and renews its lease; true when a cancel was requested. */
    @Transactional
    public boolean event(String id, int attempt, String type, ObjectNode data) {
        boolean cancel = heartbeat(id, attempt);
        insertEvent(id, type, data);
        return cancel;
    }

    void insertEvent(String id, String type, ObjectNode data) {
        em.createNativeQuery("insert into training_job_events (job_id, type, data) values (?1, ?2, cast(?3 as jsonb))")
                .setParameter(1, id).setParameter(2, type).setParameter(3, storedJson.write(data)).executeUpdate();
    }

    /** Locks the attempt's job row; LeaseLost if the attempt no longer holds it. */
    private void lockAttempt(String id, int attempt) {
        List<?> rows = em.createNativeQuery(
                "select id from training_jobs where id = ?1 and attempts = ?2 and status = 'running' for update")
                .setParameter(1, id).setParameter(2, attempt).getResultList();
        if (rows.isEmpty()) {
            throw new LeaseLost(id);
        }
    }

    /**
     * Finishes the attempt: checkpoint {@code base + 1} from the files, the job succeeded, {@code training_ended}, in
     * one transaction. Fails the job instead when the model's latest checkpoint is no longer the one it started from.
     */
    @Transactional
    public int succeed(Claimed job, List<TempFile> files, Map<String, Double> metrics) {
        lockAttempt(job.id(), job.attempt());
        models.lockModel(job.model().id());
        Integer latest = models.latestStep(job.model().id());
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
        models.addCheckpointFiles(job.model(), step, files, finalMetrics);
        finish(job.id(), "succeeded", null, step);
        ObjectNode data = finalMetrics.deepCopy();
        data.put("checkpoint_step", step);
        insertEvent(job.id(), "training_ended", data);
        return step;
    }

    private boolean cancelRequested(String id) {
        return (Boolean) em.createNativeQuery("select cancel_requested from training_jobs where id = ?1")
                .setParameter(1, id).getSingleResult();
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
        em.createNativeQuery("""
                update training_jobs set status = ?2, error = ?3, checkpoint_step = ?4, finished_at = now(),
                lease_owner = null, lease_until = null where id = ?1""").setParameter(1, id).setParameter(2, status)
                .setParameter(3, error).setParameter(4, step).executeUpdate();
        if (!status.equals("succeeded")) {
            insertEvent(id, "training_failed", JsonNodeFactory.instance.objectNode().put("error_message", error));
        }
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
        List<?> rows = em.createNativeQuery("""
                select id, attempts, cancel_requested from training_jobs
                where status = 'running' and lease_until < now() for update skip locked""").getResultList();
        for (Object row : rows) {
            Object[] r = (Object[]) row;
            String id = (String) r[0];
            int attempts = ((Number) r[1]).intValue();
            if ((Boolean) r[2]) {
                finish(id, "cancelled", "Cancelled", null);
            } else if (attempts < settings.maxAttempts()) {
                LOG.infof("Training job %s lost its lease (attempt %d); queued again", id, attempts);
                em.createNativeQuery(
                        "update training_jobs set status = 'queued', lease_owner = null, lease_until = null where id = ?1")
                        .setParameter(1, id).executeUpdate();
            } else {
                LOG.warnf("Training job %s lost its lease on attempt %d; failed", id, attempts);
                finish(id, "failed", "The executor stopped renewing the job's lease (attempt " + attempts + " of "
                        + settings.maxAttempts() + "); no checkpoint was made", null);
            }
        }
        return rows.size();
    }

    /** Records that an executor or worker asked for work now. */
    @Transactional
    public void seen(String id, String kind, String name) {
        em.createNativeQuery("""
                insert into training_workers (id, kind, name, base_models, last_seen)
                values (?1, ?2, ?3, cast(?4 as text[]), now())
                on conflict (id) do update set last_seen = now()""").setParameter(1, id).setParameter(2, kind)
                .setParameter(3, name).setParameter(4, "{}").executeUpdate();
    }

    /** Queued jobs of an executor kind. */
    @Transactional
    public long depth(String executor) {
        return ((Number) em
                .createNativeQuery("select count(*) from training_jobs where status = 'queued' and executor = ?1")
                .setParameter(1, executor).getSingleResult()).longValue();
    }

    /** Executors or workers of a kind seen within the lease window. */
    @Transactional
    public long alive(String kind) {
        return ((Number) em.createNativeQuery("""
                select count(*) from training_workers where kind = ?1
                and last_seen > now() - cast(?2 as interval)""").setParameter(1, kind).setParameter(2, interval())
                .getSingleResult()).longValue();
    }
}

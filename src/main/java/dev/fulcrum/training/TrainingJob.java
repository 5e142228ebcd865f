package dev.fulcrum.training;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * An RL or SFT job of a model, and its place in the queue: {@code seq} orders the jobs, an executor holds a running job
 * under a lease until {@code leaseUntil}, and {@code attempts} numbers its starts. State changes are conditional
 * updates in {@link JobQueue}.
 */
@Entity
@Table(name = "training_jobs")
public class TrainingJob extends PanacheEntityBase {

    @Id
    public String id;

    /** Set by the database: the queue order. */
    @Generated
    @Column(insertable = false, updatable = false)
    public Long seq;

    @Column(name = "model_id")
    public String modelId;

    /** {@code rl} or {@code sft}. */
    public String kind;

    /** {@code cpu} (the built-in executors) or {@code gpu} (external workers). */
    public String executor;

    /** {@code queued}, {@code running}, {@code succeeded}, {@code failed} or {@code cancelled}. */
    public String status = "queued";

    /** JSON text, not jsonb: trajectories may hold text jsonb cannot (a NUL character). */
    public String input;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String config;

    @Column(name = "created_by")
    public Long createdBy;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "started_at")
    public OffsetDateTime startedAt;

    @Column(name = "finished_at")
    public OffsetDateTime finishedAt;

    public String error;

    @Column(name = "base_step")
    public Integer baseStep;

    @Column(name = "checkpoint_step")
    public Integer checkpointStep;

    public int attempts;

    @Column(name = "cancel_requested")
    public boolean cancelRequested;

    @Column(name = "lease_owner")
    public String leaseOwner;

    @Column(name = "lease_until")
    public OffsetDateTime leaseUntil;
}

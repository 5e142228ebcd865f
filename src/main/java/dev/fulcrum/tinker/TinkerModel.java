package dev.fulcrum.tinker;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A Tinker training client's live LoRA model: {@code waiting} for a worker, {@code held} by one under a lease,
 * {@code released} (its session ended or it was idle) or {@code lost} (its worker stopped renewing the lease); or a
 * {@code copy} of saved weights ({@code copy_weights}), which no worker holds and nothing trains.
 */
@Entity
@Table(name = "tinker_models")
public class TinkerModel extends PanacheEntityBase {

    @Id
    public String id;

    @Column(name = "session_id")
    public String sessionId;

    @Column(name = "user_id")
    public long userId;

    /** The Fulcrum training model whose checkpoints hold the saved weights. */
    @Column(name = "training_model_id")
    public String trainingModelId;

    @Column(name = "base_model")
    public String baseModel;

    /** JSON object text (a jsonb column): rank, seed, train_attn, train_mlp, train_unembed. */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String lora;

    public String state;

    @Column(name = "worker_id")
    public String workerId;

    public int attempt;

    @Column(name = "lease_until")
    public OffsetDateTime leaseUntil;

    @Column(name = "last_request_at")
    public OffsetDateTime lastRequestAt;

    @Column(name = "ended_reason")
    public String endedReason;

    /** The {@code tinker://} path a copy was made of, else null. */
    @Column(name = "copied_from")
    public String copiedFrom;

    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

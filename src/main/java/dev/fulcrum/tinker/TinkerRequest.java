package dev.fulcrum.tinker;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * An operation of a Tinker model and its future: {@code pending}, {@code running} (on the model's worker), then
 * {@code done} with its result or {@code failed} with an error and its category; {@code expired} once its result is no
 * longer kept.
 */
@Entity
@Table(name = "tinker_requests")
public class TinkerRequest extends PanacheEntityBase {

    @Id
    public String id;

    @Column(name = "user_id")
    public long userId;

    @Column(name = "model_id")
    public String modelId;

    /** The sampling client of a sample, else null. */
    @Column(name = "sampler_id")
    public String samplerId;

    public String kind;

    @Column(name = "seq_id")
    public long seqId;

    @Column(name = "idempotency_key")
    public String idempotencyKey;

    /** The request as the SDK sent it, JSON text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String request;

    public String state;

    /** JSON text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String result;

    public String error;

    public String category;

    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "ended_at")
    public OffsetDateTime endedAt;
}

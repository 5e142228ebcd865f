package dev.fulcrum.tinker;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** Named saved weights of a Tinker model: the step of its Fulcrum training model's checkpoint that holds them. */
@Entity
@Table(name = "tinker_checkpoints")
@IdClass(TinkerCheckpoint.Key.class)
public class TinkerCheckpoint extends PanacheEntityBase {

    @Id
    @Column(name = "model_id")
    public String modelId;

    /** {@code sampler_weights} (what sampling clients load) or {@code weights} (training state: with AdamW's). */
    @Id
    public String kind;

    @Id
    public String name;

    public int step;

    @Column(name = "created_at", insertable = false, updatable = false)
    public java.time.OffsetDateTime createdAt;

    /** When the sweep deletes them (and their Fulcrum checkpoint); null: kept until deleted. */
    @Column(name = "expires_at")
    public java.time.OffsetDateTime expiresAt;

    public static class Key implements Serializable {
        public String modelId;
        public String kind;
        public String name;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(modelId, k.modelId) && Objects.equals(kind, k.kind)
                    && Objects.equals(name, k.name);
        }

        @Override
        public int hashCode() {
            return Objects.hash(modelId, kind, name);
        }
    }
}

package dev.fulcrum.training;

import java.io.Serializable;
import java.time.OffsetDateTime;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * Checkpoint {@code step} of a model: the artifact version holding its files, and the metrics of the job that made it.
 */
@Entity
@Table(name = "training_checkpoints")
@IdClass(Checkpoint.Key.class)
public class Checkpoint extends PanacheEntityBase {

    @Id
    @Column(name = "model_id")
    public String modelId;

    @Id
    public int step;

    @Column(name = "artifact_version_id")
    public long artifactVersionId;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String metrics;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public String modelId;
        public int step;

        public Key() {
        }

        public Key(String modelId, int step) {
            this.modelId = modelId;
            this.step = step;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(modelId, k.modelId) && step == k.step;
        }

        @Override
        public int hashCode() {
            return Objects.hash(modelId, step);
        }
    }
}

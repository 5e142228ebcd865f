package dev.fulcrum.training;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** Trajectory groups logged through {@code /log} for a split, at the model's latest checkpoint step then. */
@Entity
@Table(name = "training_logs")
public class TrainingLog extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "model_id")
    public String modelId;

    public String split;

    public long step;

    /** The groups as JSON text, as logged (text, as {@link TrainingJob#input}). */
    public String groups;

    @Column(name = "created_by")
    public Long createdBy;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

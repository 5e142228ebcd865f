package dev.fulcrum.training;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A model of a project: its base model, its run (for metrics) and, by its name, its {@code lora} artifact collection.
 */
@Entity
@Table(name = "training_models")
public class TrainingModel extends PanacheEntityBase {

    @Id
    public String id;

    @Column(name = "project_id")
    public Long projectId;

    public String name;

    @Column(name = "base_model")
    public String baseModel;

    @Column(name = "run_id")
    public Long runId;

    @Column(name = "run_name")
    public String runName;

    @Column(name = "created_by")
    public Long createdBy;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

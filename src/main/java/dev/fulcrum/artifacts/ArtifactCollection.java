package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A named, typed collection of versions in a project. */
@Entity
@Table(name = "artifact_collections")
public class ArtifactCollection extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "project_id")
    public long projectId;

    public String name;

    public String type;

    public String description;

    @Column(name = "created_by")
    public Long createdBy;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

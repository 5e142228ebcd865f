package dev.fulcrum.datasets;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** One version of a dataset object in a project. Deleted versions keep their index, which is never reused. */
@Entity
@Table(name = "dataset_versions")
public class DatasetVersion extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "project_id")
    public Long projectId;

    @Column(name = "object_id")
    public String objectId;

    public String digest;

    @Column(name = "version_index")
    public int versionIndex;

    public String name;

    public String description;

    @Column(name = "table_digest")
    public String tableDigest;

    @Column(name = "created_by")
    public Long createdBy;

    @Column(name = "created_at")
    public OffsetDateTime createdAt;

    @Column(name = "deleted_at")
    public OffsetDateTime deletedAt;
}

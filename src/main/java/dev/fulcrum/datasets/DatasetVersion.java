package dev.fulcrum.datasets;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

import dev.fulcrum.accounts.AccessChangeListener;

/**
 * One version of an object in a project: a dataset (the v2 datasets API's, {@code dataset} true, naming its table) or,
 * published through Weave's object API, an object of any other kind. Object ids and version indexes are shared by all
 * kinds. Deleted versions keep their index, which is never reused.
 */
@Entity
@EntityListeners(AccessChangeListener.class)
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

    /** Whether this is a dataset, which names its table and which the v2 datasets API reads. */
    public boolean dataset = true;

    /** Weave's kind: {@code object} or {@code op}. */
    public String kind = "object";

    /** Weave's base object class ({@code Dataset}, {@code Prompt}, {@code Model}...), from the object's bases. */
    @Column(name = "base_object_class")
    public String baseObjectClass = "Dataset";

    /**
     * The object as published through {@code /obj/create}, as JSON text with its keys in their order; null for a
     * dataset created in v2.
     */
    public String val;

    @Column(name = "created_by")
    public Long createdBy;

    @Column(name = "created_at")
    public OffsetDateTime createdAt;

    @Column(name = "deleted_at")
    public OffsetDateTime deletedAt;
}

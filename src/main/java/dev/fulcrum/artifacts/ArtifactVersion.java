package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** Version {@code v<versionIndex>} of a collection: its files' manifest digest, description and metadata. */
@Entity
@Table(name = "artifact_versions")
public class ArtifactVersion extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "collection_id")
    public long collectionId;

    @Column(name = "version_index")
    public int versionIndex;

    /** SHA-256 of the canonical manifest: identical uploads find their version by it. */
    public String digest;

    public String description;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String metadata;

    public long size;

    @Column(name = "file_count")
    public int fileCount;

    @Column(name = "created_by")
    public Long createdBy;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

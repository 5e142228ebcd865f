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

/** A project version linked into a registry collection as its version {@code v<linkIndex>}. */
@Entity
@Table(name = "registry_links")
public class RegistryLink extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "registry_id")
    public long registryId;

    @Column(name = "collection_name")
    public String collectionName;

    @Column(name = "link_index")
    public int linkIndex;

    @Column(name = "version_id")
    public long versionId;

    @Column(name = "created_by")
    public Long createdBy;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

package dev.fulcrum.artifacts;

import java.io.Serializable;
import java.time.OffsetDateTime;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** An alias of a collection, naming one of its versions (at most one per alias). */
@Entity
@Table(name = "artifact_aliases")
@IdClass(ArtifactAlias.Key.class)
public class ArtifactAlias extends PanacheEntityBase {

    @Id
    @Column(name = "collection_id")
    public long collectionId;

    @Id
    public String alias;

    @Column(name = "version_id")
    public long versionId;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public long collectionId;
        public String alias;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && collectionId == k.collectionId && Objects.equals(alias, k.alias);
        }

        @Override
        public int hashCode() {
            return Objects.hash(collectionId, alias);
        }
    }
}

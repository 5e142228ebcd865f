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

/** A tag of a version; many versions may carry the same tag. */
@Entity
@Table(name = "artifact_tags")
@IdClass(ArtifactTag.Key.class)
public class ArtifactTag extends PanacheEntityBase {

    @Id
    @Column(name = "version_id")
    public long versionId;

    @Id
    public String tag;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public long versionId;
        public String tag;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && versionId == k.versionId && Objects.equals(tag, k.tag);
        }

        @Override
        public int hashCode() {
            return Objects.hash(versionId, tag);
        }
    }
}

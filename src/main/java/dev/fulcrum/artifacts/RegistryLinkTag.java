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

/** A tag of a registry link. */
@Entity
@Table(name = "registry_link_tags")
@IdClass(RegistryLinkTag.Key.class)
public class RegistryLinkTag extends PanacheEntityBase {

    @Id
    @Column(name = "link_id")
    public long linkId;

    @Id
    public String tag;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public long linkId;
        public String tag;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && linkId == k.linkId && Objects.equals(tag, k.tag);
        }

        @Override
        public int hashCode() {
            return Objects.hash(linkId, tag);
        }
    }
}

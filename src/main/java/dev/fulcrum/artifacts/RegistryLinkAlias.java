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

/** An alias of a registry collection, naming one of its links. */
@Entity
@Table(name = "registry_link_aliases")
@IdClass(RegistryLinkAlias.Key.class)
public class RegistryLinkAlias extends PanacheEntityBase {

    @Id
    @Column(name = "registry_id")
    public long registryId;

    @Id
    @Column(name = "collection_name")
    public String collectionName;

    @Id
    public String alias;

    @Column(name = "link_id")
    public long linkId;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public long registryId;
        public String collectionName;
        public String alias;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && registryId == k.registryId && Objects.equals(collectionName, k.collectionName)
                    && Objects.equals(alias, k.alias);
        }

        @Override
        public int hashCode() {
            return Objects.hash(registryId, collectionName, alias);
        }
    }
}

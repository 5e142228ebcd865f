package dev.fulcrum.accounts;

import java.io.Serializable;
import java.time.OffsetDateTime;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

@Entity
@Table(name = "registry_members")
@IdClass(RegistryMember.Key.class)
public class RegistryMember extends PanacheEntityBase implements Roster.Member {

    @Id
    @Column(name = "registry_id")
    public Long registryId;

    @Id
    @Column(name = "user_id")
    public Long userId;

    @Enumerated(EnumType.STRING)
    public Role role;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Override
    public Role role() {
        return role;
    }

    @Override
    public void assign(Role role) {
        this.role = role;
    }

    @Override
    public OffsetDateTime since() {
        return createdAt;
    }

    /** A new membership of the user, not yet persisted. */
    public static RegistryMember of(long registryId, long userId) {
        RegistryMember member = new RegistryMember();
        member.registryId = registryId;
        member.userId = userId;
        return member;
    }

    public static RegistryMember find(long registryId, long userId) {
        return findById(new Key(registryId, userId));
    }

    public static class Key implements Serializable {
        public Long registryId;
        public Long userId;

        public Key() {
        }

        public Key(Long registryId, Long userId) {
            this.registryId = registryId;
            this.userId = userId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(registryId, k.registryId) && Objects.equals(userId, k.userId);
        }

        @Override
        public int hashCode() {
            return Objects.hash(registryId, userId);
        }
    }
}

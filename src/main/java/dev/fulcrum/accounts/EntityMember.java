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

/** A user's role on an entity. The owner of a personal entity is its admin. */
@Entity
@Table(name = "entity_members")
@IdClass(EntityMember.Key.class)
public class EntityMember extends PanacheEntityBase implements Roster.Member {

    @Id
    @Column(name = "entity_id")
    public Long entityId;

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
    public static EntityMember of(long entityId, long userId) {
        EntityMember member = new EntityMember();
        member.entityId = entityId;
        member.userId = userId;
        return member;
    }

    public static EntityMember find(long entityId, long userId) {
        return findById(new Key(entityId, userId));
    }

    public static class Key implements Serializable {
        public Long entityId;
        public Long userId;

        public Key() {
        }

        public Key(Long entityId, Long userId) {
            this.entityId = entityId;
            this.userId = userId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(entityId, k.entityId) && Objects.equals(userId, k.userId);
        }

        @Override
        public int hashCode() {
            return Objects.hash(entityId, userId);
        }
    }
}

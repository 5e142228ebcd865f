package dev.fulcrum.accounts;

import java.io.Serializable;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

/** A user's role on an entity. The owner of a personal entity is its admin. */
@Entity
@EntityListeners(AccessChangeListener.class)
@Table(name = "entity_members")
@IdClass(EntityMember.Key.class)
public class EntityMember extends Member {

    @Id
    @Column(name = "entity_id")
    public Long entityId;

    /** A new membership of the user, not yet persisted. */
    public static EntityMember of(long entityId, long userId) {
        EntityMember member = new EntityMember();
        member.entityId = entityId;
        member.userId = userId;
        return member;
    }

    public record Key(Long entityId, Long userId) implements Serializable {
    }
}

package dev.fulcrum.accounts;

import java.io.Serializable;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

/** A user's role on a registry. */
@Entity
@Table(name = "registry_members")
@IdClass(RegistryMember.Key.class)
public class RegistryMember extends Member {

    @Id
    @Column(name = "registry_id")
    public Long registryId;

    /** A new membership of the user, not yet persisted. */
    public static RegistryMember of(long registryId, long userId) {
        RegistryMember member = new RegistryMember();
        member.registryId = registryId;
        member.userId = userId;
        return member;
    }

    public record Key(Long registryId, Long userId) implements Serializable {
    }
}

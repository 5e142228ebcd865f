package dev.fulcrum.accounts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.MappedSuperclass;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A user's role on a team or registry: what {@link EntityMember} and {@link RegistryMember} share. Each adds the id of
 * what the user is a member of, which together with {@link #userId} is its key; {@link Roster} reads and changes both.
 */
@MappedSuperclass
public abstract class Member extends PanacheEntityBase {

    @Id
    @Column(name = "user_id")
    public Long userId;

    @Enumerated(EnumType.STRING)
    public Role role;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

package dev.fulcrum.automations;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A named value of a team, stored only sealed ({@link TeamSecrets#context} binds it to the team and the name). */
@Entity
@Table(name = "team_secrets")
public class TeamSecret extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "team_id")
    public long teamId;

    public String name;

    /** The ciphertext; the plain value is never stored. */
    public byte[] value;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Generated
    @Column(name = "updated_at", insertable = false)
    public OffsetDateTime updatedAt;
}

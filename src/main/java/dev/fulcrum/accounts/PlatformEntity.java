package dev.fulcrum.accounts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** An entity of the platform: a user's personal namespace or a team. Projects belong to entities. */
@Entity
@EntityListeners(AccessChangeListener.class)
@Table(name = "entities")
public class PlatformEntity extends PanacheEntityBase {

    public enum Kind {
        USER, TEAM
    }

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    public String name;

    @Enumerated(EnumType.STRING)
    public Kind kind;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static PlatformEntity findByName(String name) {
        return find("name", name).firstResult();
    }
}

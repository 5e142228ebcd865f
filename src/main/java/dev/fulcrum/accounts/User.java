package dev.fulcrum.accounts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

@Entity
@EntityListeners(AccessChangeListener.class)
@Table(name = "users")
public class User extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    public String username;

    public String email;

    /** Server administrator: every right on every entity, registry and project. */
    public boolean admin;

    /** The user's personal entity, named like the user. */
    @ManyToOne(optional = false)
    @JoinColumn(name = "entity_id")
    public PlatformEntity entity;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static User findByUsername(String username) {
        return find("username", username).firstResult();
    }
}

package dev.fulcrum.accounts;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** An API key; only the SHA-256 of the secret is stored, with its first characters for recognition. */
@Entity
@EntityListeners(AccessChangeListener.class)
@Table(name = "api_keys")
public class ApiKey extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "user_id")
    public Long userId;

    public String name;

    @Column(name = "key_hash")
    public String keyHash;

    public String prefix;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "last_used_at")
    public OffsetDateTime lastUsedAt;

    @Column(name = "revoked_at")
    public OffsetDateTime revokedAt;
}

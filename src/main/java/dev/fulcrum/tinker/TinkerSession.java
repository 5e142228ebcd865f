package dev.fulcrum.tinker;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A session of the Tinker SDK: its user, the project of its models, and when it last sent a heartbeat. */
@Entity
@Table(name = "tinker_sessions")
public class TinkerSession extends PanacheEntityBase {

    @Id
    public String id;

    @Column(name = "user_id")
    public long userId;

    public String entity;

    public String project;

    @Column(name = "sdk_version")
    public String sdkVersion;

    /** JSON array text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String tags;

    @Column(name = "heartbeat_at")
    public OffsetDateTime heartbeatAt;

    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "ended_at")
    public OffsetDateTime endedAt;
}

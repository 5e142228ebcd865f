package dev.fulcrum.events;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** One entry of the platform event log: what happened, where, by whom. */
@Entity
@Table(name = "platform_events")
public class LoggedEvent extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Enumerated(EnumType.STRING)
    public EventType type;

    /** Set by the database (not read back after the insert, which would cost a statement). */
    @Column(name = "occurred_at", insertable = false, updatable = false)
    public OffsetDateTime occurredAt;

    @Column(name = "project_id")
    public Long projectId;

    @Column(name = "registry_id")
    public Long registryId;

    @Column(name = "author_id")
    public Long authorId;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String payload;
}

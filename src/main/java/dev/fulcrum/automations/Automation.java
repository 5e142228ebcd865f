package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;
import org.hibernate.annotations.JdbcTypeCode;
import org.hibernate.type.SqlTypes;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * An automation of a project or a registry (exactly one of {@code projectId}, {@code registryId}): which event sends
 * which payload to which team webhook, acting for the user {@code actsAs} ({@link AutomationRights}).
 */
@Entity
@Table(name = "automations")
public class Automation extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    public String name;

    public String description;

    @Column(name = "project_id")
    public Long projectId;

    @Column(name = "registry_id")
    public Long registryId;

    /** A {@link TriggerEvent} name. */
    @Column(name = "event_type")
    public String eventType;

    /** The {@link AutomationCondition} as JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String condition;

    /** An {@link AutomationAction} name. */
    @Column(name = "action_type")
    public String actionType;

    /** The webhook's team; null for {@code DO_NOTHING}. */
    @Column(name = "team_entity_id")
    public Long teamEntityId;

    /** Null for {@code DO_NOTHING}. */
    @Column(name = "webhook_id")
    public Long webhookId;

    public String payload;

    @JdbcTypeCode(SqlTypes.ARRAY)
    @Column(name = "granted_secrets")
    public List<String> grantedSecrets;

    public boolean enabled;

    @Column(name = "created_by")
    public Long createdBy;

    @Column(name = "acts_as")
    public Long actsAs;

    /** Whether the payload puts secret values into the body (then {@code actsAs} needs the team's admin role). */
    @Column(name = "uses_secrets")
    public boolean usesSecrets;

    /** Why the platform disabled the automation; cleared when it is enabled. */
    @Column(name = "disabled_reason")
    public String disabledReason;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Generated
    @Column(name = "updated_at", insertable = false)
    public OffsetDateTime updatedAt;
}

package dev.fulcrum.automations;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A delivery of the outbox, read for its log. Rows are written and moved through their states by {@link DeliveryQueue}
 * only; the body and the secrets it was rendered with stay sealed and are not mapped.
 */
@Entity
@Table(name = "webhook_deliveries")
public class WebhookDelivery extends PanacheEntityBase {

    @Id
    public Long id;

    @Column(name = "webhook_id")
    public long webhookId;

    @Column(name = "automation_id")
    public Long automationId;

    @Column(name = "event_id")
    public Long eventId;

    /** {@code pending}, {@code succeeded} or {@code failed}. */
    public String state;

    public int attempts;

    @Column(name = "next_attempt_at")
    public OffsetDateTime nextAttemptAt;

    @Column(name = "created_at")
    public OffsetDateTime createdAt;

    @Column(name = "completed_at")
    public OffsetDateTime completedAt;
}

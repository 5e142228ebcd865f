package dev.fulcrum.automations;

import java.io.Serializable;
import java.time.OffsetDateTime;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * One attempt to send a delivery, read for its log (written by {@link DeliveryQueue}): no status when the endpoint was
 * not reached, then {@code error} says why.
 */
@Entity
@Table(name = "webhook_attempts")
@IdClass(WebhookAttempt.Key.class)
public class WebhookAttempt extends PanacheEntityBase {

    @Id
    @Column(name = "delivery_id")
    public long deliveryId;

    @Id
    public int attempt;

    @Column(name = "attempted_at")
    public OffsetDateTime attemptedAt;

    public Integer status;

    @Column(name = "latency_ms")
    public int latencyMs;

    @Column(name = "response_body")
    public String responseBody;

    public String error;

    public static class Key implements Serializable {
        public long deliveryId;
        public int attempt;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.deliveryId == deliveryId && k.attempt == attempt;
        }

        @Override
        public int hashCode() {
            return Objects.hash(deliveryId, attempt);
        }
    }
}

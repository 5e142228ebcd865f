package dev.fulcrum.inference;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Immutable;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** The usage of one completion. Rows are written in batches by {@link UsageRecorder} (COPY) and never changed. */
@Entity
@Immutable
@Table(name = "inference_usage")
public class InferenceUsage extends PanacheEntityBase {

    @Id
    public long id;

    @Column(name = "created_at")
    public OffsetDateTime createdAt;

    public String entity;

    public String project;

    @Column(name = "user_id")
    public long userId;

    public String model;

    @Column(name = "prompt_tokens")
    public int promptTokens;

    @Column(name = "completion_tokens")
    public int completionTokens;

    @Column(name = "latency_ms")
    public int latencyMs;

    public int status;

    /** The tokens an entity's completions used from {@code since} on. */
    static long tokensSince(String entity, OffsetDateTime since) {
        Long used = getEntityManager().createQuery("""
                select sum(u.promptTokens + u.completionTokens) from InferenceUsage u
                where u.entity = ?1 and u.createdAt >= ?2""", Long.class).setParameter(1, entity).setParameter(2, since)
                .getSingleResult();
        return used == null ? 0 : used;
    }
}

package dev.fulcrum.inference.catalog;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.JdbcTypeCode;
import org.hibernate.type.SqlTypes;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A model added through the admin API, with its upstream's API key sealed ({@link ModelCatalog} opens it); models of
 * the configuration are not stored.
 */
@Entity
@Table(name = "inference_models")
public class InferenceModel extends PanacheEntityBase {

    @Id
    public String id;

    public String backend;

    @Column(name = "base_url")
    public String baseUrl;

    /** Every replica's base URL (null in rows of releases before replicas: {@link #baseUrl} alone). */
    @Column(name = "base_urls")
    @JdbcTypeCode(SqlTypes.ARRAY)
    public List<String> baseUrls;

    /** {@code least-outstanding} or {@code prefix-affinity}. */
    public String routing;

    /** The models that answer instead, in order. */
    @JdbcTypeCode(SqlTypes.ARRAY)
    public List<String> fallbacks;

    @Column(name = "api_key_sealed")
    public byte[] apiKeySealed;

    @Column(name = "upstream_model")
    public String upstreamModel;

    public String root;

    @Column(name = "connect_timeout_ms")
    public int connectTimeoutMs;

    @Column(name = "timeout_ms")
    public int timeoutMs;

    @Column(name = "max_concurrency")
    public int maxConcurrency;

    @Column(name = "max_queue")
    public int maxQueue;

    @Column(name = "max_tokens")
    public Integer maxTokens;

    /** The GGUF file of a {@code gguf} model. */
    @Column(name = "gguf_path")
    public String ggufPath;

    /** A {@code gguf} model's default {@code reasoning_format} ({@code auto} or {@code none}), null for the others. */
    @Column(name = "reasoning_format")
    public String reasoningFormat;

    /** Trained by {@code fulcrum-worker} workers (a {@code gguf} model only). */
    public boolean trainable;

    /** Set by the database on insert. */
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    /** Set by the database on insert; the database's clock on every change. */
    @Column(name = "updated_at", insertable = false)
    public OffsetDateTime updatedAt;
}

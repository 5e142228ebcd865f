package dev.fulcrum.inference.hub;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.JdbcTypeCode;
import org.hibernate.type.SqlTypes;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A model's pull from the Hub, as it stands: kept so that a restart resumes it. */
@Entity
@Table(name = "model_pulls")
public class ModelPull extends PanacheEntityBase {

    @Id
    @Column(name = "model_id")
    public String modelId;

    /** {@code admin} (the admin API) or {@code config} (the configuration). */
    public String source;

    /** {@code hf.co/{owner}/{repo}[:{quant}]}. */
    public String name;

    public String revision;

    /** The commit the revision named when the pull was planned; the files are downloaded from it. */
    @Column(name = "commit_sha")
    public String commitSha;

    /** The files chosen, {@code [{"path","size","sha256"}]}, first part first. */
    @JdbcTypeCode(SqlTypes.JSON)
    public String files;

    /** {@code queued}, {@code downloading}, {@code verifying}, {@code ready} or {@code failed}. */
    public String state;

    @Column(name = "completed_bytes")
    public long completedBytes;

    @Column(name = "total_bytes")
    public Long totalBytes;

    public String error;

    /** The stored file (the first part of a split one) once ready. */
    @Column(name = "gguf_path")
    public String ggufPath;

    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "updated_at")
    public OffsetDateTime updatedAt;
}

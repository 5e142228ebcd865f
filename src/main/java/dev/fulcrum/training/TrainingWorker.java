package dev.fulcrum.training;

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
 * An external GPU worker ({@code kind = gpu}) or a replica's built-in CPU executor ({@code cpu}), with when it last
 * asked for work. Rows are written by {@link WorkerStatements}.
 */
@Entity
@Table(name = "training_workers")
public class TrainingWorker extends PanacheEntityBase {

    @Id
    public String id;

    public String kind;

    public String name;

    @JdbcTypeCode(SqlTypes.ARRAY)
    @Column(name = "base_models")
    public List<String> baseModels;

    @Column(name = "created_by")
    public Long createdBy;

    @Column(name = "created_at")
    public OffsetDateTime createdAt;

    @Column(name = "last_seen")
    public OffsetDateTime lastSeen;
}

package dev.fulcrum.runs;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A run of a project. Created, and its metric history logged, by {@link RunStatements}: the summary, last step and
 * history row count change only there, so the entity never writes them back.
 */
@Entity
@Table(name = "runs")
public class Run extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "project_id")
    public Long projectId;

    public String name;

    @Column(name = "display_name")
    public String displayName;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String config;

    /** {@code running}, {@code finished}, {@code failed}, {@code crashed} or {@code killed}. */
    public String state;

    /** JSON object text (a jsonb column): the last logged value of each metric. */
    @Column(insertable = false, updatable = false)
    public String summary;

    @Column(name = "last_step", insertable = false, updatable = false)
    public long lastStep;

    @Column(name = "row_count", insertable = false, updatable = false)
    public long rowCount;

    /** Labels the W&B SDK sets (a text[] column). */
    public String[] tags;

    /** Free text the W&B SDK sets. */
    public String notes;

    @Column(name = "created_by")
    public Long createdBy;

    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Column(name = "updated_at")
    public OffsetDateTime updatedAt;
}

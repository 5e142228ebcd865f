package dev.fulcrum.datasets;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * An ordered list of rows, stored once per table digest and shared by every version that names it. Written by
 * {@link DatasetStatements} (an insert that does nothing when the table is stored already).
 */
@Entity
@Table(name = "dataset_tables")
public class DatasetTable extends PanacheEntityBase {

    @Id
    public String digest;

    @Column(name = "row_count")
    public int rowCount;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;
}

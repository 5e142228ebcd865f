package dev.fulcrum.datasets;

import java.io.Serializable;
import java.time.OffsetDateTime;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A table a project published with {@code /table/create}: the project may read it and name it in its objects before (or
 * without) any dataset naming it. Written by {@link WeaveObjects} (an insert that does nothing when it is recorded
 * already).
 */
@Entity
@Table(name = "project_tables")
@IdClass(ProjectTable.Key.class)
public class ProjectTable extends PanacheEntityBase {

    @Id
    @Column(name = "project_id")
    public Long projectId;

    @Id
    @Column(name = "table_digest")
    public String tableDigest;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    public static class Key implements Serializable {
        public Long projectId;
        public String tableDigest;

        public Key() {
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(projectId, k.projectId)
                    && Objects.equals(tableDigest, k.tableDigest);
        }

        @Override
        public int hashCode() {
            return Objects.hash(projectId, tableDigest);
        }
    }
}

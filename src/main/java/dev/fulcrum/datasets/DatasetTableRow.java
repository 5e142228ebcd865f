package dev.fulcrum.datasets;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** The row at {@code originalIndex} of a table. */
@Entity
@Table(name = "dataset_table_rows")
@IdClass(DatasetTableRow.Key.class)
public class DatasetTableRow extends PanacheEntityBase {

    @Id
    @Column(name = "table_digest")
    public String tableDigest;

    @Id
    @Column(name = "original_index")
    public int originalIndex;

    @ManyToOne(fetch = FetchType.LAZY, optional = false)
    @JoinColumn(name = "row_digest")
    public DatasetRow row;

    public static class Key implements Serializable {
        public String tableDigest;
        public int originalIndex;

        public Key() {
        }

        public Key(String tableDigest, int originalIndex) {
            this.tableDigest = tableDigest;
            this.originalIndex = originalIndex;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(tableDigest, k.tableDigest) && originalIndex == k.originalIndex;
        }

        @Override
        public int hashCode() {
            return Objects.hash(tableDigest, originalIndex);
        }
    }
}

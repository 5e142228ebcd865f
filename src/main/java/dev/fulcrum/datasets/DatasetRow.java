package dev.fulcrum.datasets;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * One dataset row as JSON text (keys in the order of its first publication), stored once per row digest however many
 * tables hold it.
 */
@Entity
@Table(name = "dataset_rows")
public class DatasetRow extends PanacheEntityBase {

    @Id
    public String digest;

    public String val;
}

package dev.fulcrum.tinker;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A file a worker uploaded for a running save: in the blob store; a checkpoint's file once the save ends. */
@Entity
@Table(name = "tinker_files")
@IdClass(TinkerFile.Key.class)
public class TinkerFile extends PanacheEntityBase {

    @Id
    @Column(name = "request_id")
    public String requestId;

    @Id
    public String path;

    public String digest;

    public long size;

    public static class Key implements Serializable {
        public String requestId;
        public String path;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(requestId, k.requestId) && Objects.equals(path, k.path);
        }

        @Override
        public int hashCode() {
            return Objects.hash(requestId, path);
        }
    }
}

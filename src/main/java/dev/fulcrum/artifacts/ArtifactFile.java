package dev.fulcrum.artifacts;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A file of a version; its content is the blob named by its digest. */
@Entity
@Table(name = "artifact_files")
@IdClass(ArtifactFile.Key.class)
public class ArtifactFile extends PanacheEntityBase {

    @Id
    @Column(name = "version_id")
    public long versionId;

    @Id
    public String path;

    public String digest;

    public long size;

    @Column(name = "content_type")
    public String contentType;

    public static class Key implements Serializable {
        public long versionId;
        public String path;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && versionId == k.versionId && Objects.equals(path, k.path);
        }

        @Override
        public int hashCode() {
            return Objects.hash(versionId, path);
        }
    }
}

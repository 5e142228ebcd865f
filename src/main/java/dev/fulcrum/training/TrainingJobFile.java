package dev.fulcrum.training;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A checkpoint file a worker uploaded for a job attempt, kept in the blob store until the job finishes. */
@Entity
@Table(name = "training_job_files")
@IdClass(TrainingJobFile.Key.class)
public class TrainingJobFile extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public String jobId;

    @Id
    public int attempt;

    @Id
    public String path;

    public String digest;

    public long size;

    public static class Key implements Serializable {
        public String jobId;
        public int attempt;
        public String path;

        public Key() {
        }

        public Key(String jobId, int attempt, String path) {
            this.jobId = jobId;
            this.attempt = attempt;
            this.path = path;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(jobId, k.jobId) && attempt == k.attempt
                    && Objects.equals(path, k.path);
        }

        @Override
        public int hashCode() {
            return Objects.hash(jobId, attempt, path);
        }
    }
}

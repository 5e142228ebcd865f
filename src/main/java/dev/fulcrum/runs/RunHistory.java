package dev.fulcrum.runs;

import java.io.Serializable;
import java.util.Objects;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** One logged history row of a run; {@code seq} orders a run's rows as they were logged. */
@Entity
@Table(name = "run_history")
@IdClass(RunHistory.Key.class)
public class RunHistory extends PanacheEntityBase {

    @Id
    @Column(name = "run_id")
    public long runId;

    @Id
    public long seq;

    public long step;

    /** JSON object text (a jsonb column), {@code _step} included. */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String val;

    public static class Key implements Serializable {
        public long runId;
        public long seq;

        public Key() {
        }

        public Key(long runId, long seq) {
            this.runId = runId;
            this.seq = seq;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && runId == k.runId && seq == k.seq;
        }

        @Override
        public int hashCode() {
            return Objects.hash(runId, seq);
        }
    }
}

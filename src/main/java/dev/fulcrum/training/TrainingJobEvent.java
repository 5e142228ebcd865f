package dev.fulcrum.training;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** An event of a training job; ids increase, so they are the cursor of the event list. */
@Entity
@Table(name = "training_job_events")
public class TrainingJobEvent extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "job_id")
    public String jobId;

    public String type;

    /** JSON object text (a jsonb column). */
    @ColumnTransformer(write = "cast(? as jsonb)")
    public String data;

    /** Set by the database; read back after the insert. */
    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    static TrainingJobEvent of(String jobId, String type, String data) {
        TrainingJobEvent event = new TrainingJobEvent();
        event.jobId = jobId;
        event.type = type;
        event.data = data;
        return event;
    }
}

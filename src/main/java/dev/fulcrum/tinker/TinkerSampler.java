package dev.fulcrum.tinker;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A sampling client: a base model of the catalog, or saved weights of a Tinker model (a checkpoint of its Fulcrum
 * training model, served as {@code wandb-artifact:///{entity}/{project}/{name}:step{N}}).
 */
@Entity
@Table(name = "tinker_samplers")
public class TinkerSampler extends PanacheEntityBase {

    @Id
    public String id;

    @Column(name = "session_id")
    public String sessionId;

    @Column(name = "user_id")
    public long userId;

    @Column(name = "base_model")
    public String baseModel;

    @Column(name = "model_path")
    public String modelPath;

    /** The checkpoint's model as the inference API names it ({@code wandb-artifact:///...:stepN}), or null. */
    public String checkpoint;

    @Column(name = "created_at", insertable = false, updatable = false)
    public java.time.OffsetDateTime createdAt;
}

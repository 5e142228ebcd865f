package dev.fulcrum.training;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.TrainedCheckpoints;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * The training models' checkpoints as the inference catalog serves them ({@code wandb-artifact:///...} model ids): for
 * members of the model's entity, any role.
 */
@ApplicationScoped
public class ServedCheckpoints implements TrainedCheckpoints {

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Override
    public Optional<Checkpoint> find(String entity, String project, String name, Integer step) {
        ModelView model = models.byName(entity, project, name);
        models.model(model.id(), Role.VIEWER);
        return checkpoints.stored(model.id(), step).map(stored -> new Checkpoint(entity, project, name,
                model.baseModel(), stored.step(), stored.artifactVersionId()));
    }
}

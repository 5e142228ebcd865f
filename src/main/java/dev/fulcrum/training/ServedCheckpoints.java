package dev.fulcrum.training;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.TrainedCheckpoints;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * The training models' checkpoints as the inference catalog serves them ({@code wandb-artifact:///...} model ids): for
 * members of the model's entity, any role. A version other than {@code latest} and {@code step{N}} is looked up in the
 * model's artifact collection ({@code v<N>} or an alias, such as the {@code production} an automation moves).
 */
@ApplicationScoped
public class ServedCheckpoints implements TrainedCheckpoints {

    private static final Pattern STEP = Pattern.compile("step(\\d{1,9})");

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Inject
    ArtifactVersions versions;

    @Override
    public Optional<Checkpoint> find(String entity, String project, String name, String version) {
        ModelView model = models.byName(entity, project, name);
        models.model(model.id(), Role.VIEWER);
        Optional<Checkpoints.Stored> stored;
        Matcher step = STEP.matcher(version == null ? "" : version);
        if (version == null || version.equals("latest")) {
            stored = checkpoints.stored(model.id(), null);
        } else if (step.matches()) {
            stored = checkpoints.stored(model.id(), Integer.valueOf(step.group(1)));
        } else {
            stored = checkpoints.storedVersion(model.id(), versions.versionId(entity, project, name, version));
        }
        return stored
                .map(s -> new Checkpoint(entity, project, name, model.baseModel(), s.step(), s.artifactVersionId()));
    }
}

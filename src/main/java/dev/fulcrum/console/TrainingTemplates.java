package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.training.api.model.TrainingJob;
import dev.fulcrum.training.api.model.TrainingModel;

/** The training and playground pages (src/main/resources/templates/console), checked when the application is built. */
@CheckedTemplate(basePath = "console")
final class TrainingTemplates {

    private TrainingTemplates() {
    }

    static native TemplateInstance training(String entity, String project, String base, List<TrainingModel> models,
            String next);

    static native TemplateInstance trainingModel(String base, TrainingModel model,
            List<TrainingPages.CheckpointRow> checkpoints, List<TrainingJob> jobs, boolean member);

    static native TemplateInstance trainingJob(String base, TrainingModel model, TrainingJob job,
            List<TrainingPages.EventRow> events, String after, boolean finished, boolean member);

    static native TemplateInstance playground(List<String> models, PlaygroundPages.Form form);
}

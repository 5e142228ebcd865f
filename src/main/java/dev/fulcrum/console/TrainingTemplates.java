package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.training.api.model.TrainingCheckpoint;
import dev.fulcrum.training.api.model.TrainingJob;
import dev.fulcrum.training.api.model.TrainingJobEvent;
import dev.fulcrum.training.api.model.TrainingModel;

/**
 * The training, Tinker and playground pages (src/main/resources/templates/console), checked when the application is
 * built.
 */
@CheckedTemplate(basePath = "console")
final class TrainingTemplates {

    /** A checkpoint with the link that opens it in the playground. */
    public record CheckpointRow(TrainingCheckpoint checkpoint, String metrics, String chat) {
    }

    /** An event as the page shows it: its data compactly, and a gradient step's metrics as JSON for the curves. */
    public record EventRow(TrainingJobEvent event, String data, String metrics) {
    }

    /** The playground's fields, from the query (a checkpoint's "Chat" button fills model and project). */
    public record Form(String model, String project, boolean listed) {
    }

    /** A Tinker session: its project (and that project's page), when it began and ended, its clients. */
    public record TinkerSessionRow(String id, String project, String projectPage, String createdAt, String endedAt,
            List<TinkerRunRow> runs, List<TinkerSamplerRow> samplers) {
    }

    /**
     * A Tinker training client: base model, LoRA rank, state, latest saved weights of each kind, and the page of the
     * Fulcrum training model whose checkpoints hold them.
     */
    public record TinkerRunRow(String id, String baseModel, int rank, String state, String lastRequest,
            String lastState, String lastSamplerWeights, String modelPage) {
    }

    /** A Tinker sampling client: its base model, and the saved weights it samples (null: the base). */
    public record TinkerSamplerRow(String id, String baseModel, String modelPath) {
    }

    private TrainingTemplates() {
    }

    static native TemplateInstance training(String entity, String project, String base, List<TrainingModel> models,
            String next);

    static native TemplateInstance trainingModel(String base, TrainingModel model, List<CheckpointRow> checkpoints,
            List<TrainingJob> jobs, boolean member);

    static native TemplateInstance trainingJob(String base, TrainingModel model, TrainingJob job, List<EventRow> events,
            String after, boolean finished, boolean member);

    static native TemplateInstance playground(List<String> models, Form form);

    static native TemplateInstance tinkerSessions(List<TinkerSessionRow> sessions, Integer previous, Integer next);
}

package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.api.ProjectsApi;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.training.api.ModelsApi;
import dev.fulcrum.training.api.TrainingJobsApi;
import dev.fulcrum.training.api.model.TrainingCheckpoint;
import dev.fulcrum.training.api.model.TrainingCheckpointPage;
import dev.fulcrum.training.api.model.TrainingCheckpointsDelete;
import dev.fulcrum.training.api.model.TrainingJob;
import dev.fulcrum.training.api.model.TrainingJobEvent;
import dev.fulcrum.training.api.model.TrainingJobEventPage;
import dev.fulcrum.training.api.model.TrainingJobPage;
import dev.fulcrum.training.api.model.TrainingModel;
import dev.fulcrum.training.api.model.TrainingModelPage;

/**
 * Training of a project: its models, a model's checkpoints and jobs, and a job's events with its loss and reward
 * curves, which the page's script ({@code assets/training.js}) keeps up to date from {@code events.json} while the job
 * runs. Readers of the project see everything; its members (those the API lets start and cancel jobs) see the delete
 * and cancel forms. The API decides every change.
 */
@Path("/console/projects/{entity}/{project}/training")
@AuthenticatesWithSession
@Blocking
public class TrainingPages {

    /** Events read for one page or one poll: the API's largest page, a few times. */
    private static final int EVENT_PAGES = 20;
    private static final Set<TrainingJob.StatusEnum> FINISHED = Set.of(TrainingJob.StatusEnum.SUCCEEDED,
            TrainingJob.StatusEnum.FAILED, TrainingJob.StatusEnum.CANCELLED);

    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    ConsoleRequest console;

    @Inject
    ModelsApi models;

    @Inject
    TrainingJobsApi jobs;

    @Inject
    ProjectsApi projects;

    @Inject
    DataRoles roles;

    static String base(String entity, String project) {
        return "/console/projects/" + Pages.path(entity) + "/" + Pages.path(project) + "/training";
    }

    @GET
    public Response list(@RestPath String entity, @RestPath String project, @RestQuery String after) {
        return Pages.page(() -> {
            // the model list filters by project and so answers an empty page for a project one may not read, or that
            // does not exist: the project itself answers the API's 403 or 404, as on every other project screen
            projects.getProject(entity, project);
            TrainingModelPage page = Pages.body(models.listModels(Pages.blankToNull(after), 50, entity, project));
            return TrainingTemplates.training(entity, project, base(entity, project), page.getData(),
                    Boolean.TRUE.equals(page.getHasMore()) ? page.getLastId() : null);
        });
    }

    @GET
    @Path("/models/{model}")
    public Response model(@RestPath String entity, @RestPath String project, @RestPath String model) {
        return Pages.page(() -> modelPage(entity, project, model));
    }

    private TemplateInstance modelPage(String entity, String project, String modelId) {
        TrainingModel model = ofProject(entity, project, modelId);
        List<TrainingTemplates.CheckpointRow> checkpoints = new ArrayList<>();
        String after = null;
        do { // every checkpoint, newest first
            TrainingCheckpointPage page = Pages.body(models.listCheckpoints(modelId, after, 100, "desc"));
            for (TrainingCheckpoint checkpoint : page.getData()) {
                Map<String, Object> metrics = new LinkedHashMap<>();
                if (checkpoint.getMetrics() != null) {
                    metrics.putAll(checkpoint.getMetrics());
                }
                checkpoints.add(new TrainingTemplates.CheckpointRow(checkpoint, compact(metrics),
                        PlaygroundPages.link(checkpoint.getArtifact(), model.getEntity() + "/" + model.getProject())));
            }
            after = Boolean.TRUE.equals(page.getHasMore()) ? page.getLastId() : null;
        } while (after != null && checkpoints.size() < 1000);
        TrainingJobPage jobPage = Pages.body(models.listModelTrainingJobs(modelId, null, 100));
        return TrainingTemplates.trainingModel(base(entity, project), model, checkpoints, jobPage.getData(),
                roles.projectWriter(entity));
    }

    /** The model, when it is one of this project's (404 otherwise, as for a model that does not exist). */
    private TrainingModel ofProject(String entity, String project, String modelId) {
        TrainingModel model = Pages.body(models.getModel(modelId));
        if (!model.getEntity().equals(entity) || !model.getProject().equals(project)) {
            throw ApiException.notFound("Model " + modelId + " is not a model of " + entity + "/" + project);
        }
        return model;
    }

    @GET
    @Path("/jobs/{job}")
    public Response job(@RestPath String entity, @RestPath String project, @RestPath String job) {
        return Pages.page(() -> jobPage(entity, project, job));
    }

    private TemplateInstance jobPage(String entity, String project, String jobId) {
        TrainingJob job = Pages.body(jobs.getTrainingJob(jobId));
        TrainingModel model = ofProject(entity, project, job.getModelId());
        Events events = events(jobId, null);
        List<TrainingTemplates.EventRow> rows = events.events().stream()
                .map(e -> new TrainingTemplates.EventRow(e, compact(e.getData()),
                        e.getType() == TrainingJobEvent.TypeEnum.GRADIENT_STEP ? json(e.getData()) : null))
                .toList();
        return TrainingTemplates.trainingJob(base(entity, project), model, job, rows, events.after(),
                FINISHED.contains(job.getStatus()) && !events.more(), roles.projectWriter(entity));
    }

    /**
     * The job's events after the cursor {@code after} (all of them without one), for the job page's script: the events
     * as the API answers them, the cursor to ask with next, and the job's state. The state is read before the events,
     * so that once it says finished, the events read with it are the last ones.
     */
    @GET
    @Path("/jobs/{job}/events.json")
    @Produces(MediaType.APPLICATION_JSON)
    public Response eventsJson(@RestPath String entity, @RestPath String project, @RestPath String job,
            @RestQuery String after) {
        try {
            TrainingJob found = Pages.body(jobs.getTrainingJob(job));
            ofProject(entity, project, found.getModelId());
            Events events = events(job, Pages.blankToNull(after));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", found.getStatus().toString());
            body.put("started_at", found.getStartedAt() == null ? null : found.getStartedAt().toString());
            body.put("finished_at", found.getFinishedAt() == null ? null : found.getFinishedAt().toString());
            body.put("finished", FINISHED.contains(found.getStatus()) && !events.more());
            body.put("after", events.after());
            body.put("events", events.events());
            return Response.ok(body).header("Cache-Control", "no-store").build();
        } catch (ApiException e) {
            return Response.status(Pages.status(e)).type(MediaType.APPLICATION_JSON)
                    .entity(Map.of("detail", e.getMessage())).header("Cache-Control", "no-store").build();
        }
    }

    private record Events(List<TrainingJobEvent> events, String after, boolean more) {
    }

    /** Up to {@link #EVENT_PAGES} pages of events after the cursor, through the API's cursor paging. */
    private Events events(String job, String after) {
        List<TrainingJobEvent> all = new ArrayList<>();
        String cursor = after;
        boolean more = true;
        for (int page = 0; page < EVENT_PAGES && more; page++) {
            TrainingJobEventPage read = Pages.body(jobs.listTrainingJobEvents(job, cursor, 100));
            all.addAll(read.getData());
            if (!read.getData().isEmpty()) {
                cursor = read.getLastId();
            }
            more = Boolean.TRUE.equals(read.getHasMore());
        }
        return new Events(all, cursor, more);
    }

    private static String json(Map<String, Object> data) {
        try {
            return JSON.writeValueAsString(data == null ? Map.of() : data);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String compact(Map<String, Object> data) {
        if (data == null || data.isEmpty()) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        data.forEach((key, value) -> {
            if (text.length() > 0) {
                text.append(", ");
            }
            text.append(key).append(' ')
                    .append(value instanceof Number n && !(value instanceof Integer) && !(value instanceof Long)
                            ? String.format("%.4g", n.doubleValue())
                            : value);
        });
        return text.toString();
    }

    @POST
    @Path("/models/{model}/checkpoints/{step}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response deleteCheckpoint(@RestPath String entity, @RestPath String project, @RestPath String model,
            @RestPath int step) {
        return Pages.act(console, () -> {
            ofProject(entity, project, model);
            models.deleteCheckpoints(model, new TrainingCheckpointsDelete().steps(List.of(step)));
        }, base(entity, project) + "/models/" + Pages.path(model), () -> modelPage(entity, project, model));
    }

    @POST
    @Path("/jobs/{job}/cancel")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response cancel(@RestPath String entity, @RestPath String project, @RestPath String job) {
        String jobPage = base(entity, project) + "/jobs/" + Pages.path(job);
        return Pages.act(console, () -> jobs.cancelTrainingJob(job), jobPage, () -> jobPage(entity, project, job));
    }
}

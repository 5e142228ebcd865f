package dev.fulcrum.training;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.training.api.ModelsApi;
import dev.fulcrum.training.api.model.TrainingCheckpointsDelete;
import dev.fulcrum.training.api.model.TrainingCheckpointsDeleted;
import dev.fulcrum.training.api.model.TrainingLogRequest;
import dev.fulcrum.training.api.model.TrainingModelCreate;
import dev.fulcrum.training.api.model.TrainingModelDeleted;

public class ModelsResource implements ModelsApi {

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Inject
    TrainingLogs logs;

    @Inject
    TrainingJobs jobs;

    @Override
    public Response createModel(TrainingModelCreate req) {
        TrainingModelCreate body = req;
        TrainingModels.Created created = models.create(body.getEntity(), body.getProject(), body.getName(),
                body.getBaseModel(), Boolean.TRUE.equals(body.getReturnExisting()));
        return Response.status(created.isNew() ? 201 : 200).entity(TrainingMapper.model(created.model())).build();
    }

    @Override
    public Response listModels(String after, Integer limit, String entity, String project) {
        return Response.ok(TrainingMapper.models(models.list(after, limit, entity, project))).build();
    }

    @Override
    public Response getModel(String modelId) {
        return Response.ok(TrainingMapper.model(models.model(modelId, Role.VIEWER))).build();
    }

    @Override
    public Response deleteModel(String modelId) {
        TrainingModels.Deleted deleted = models.delete(modelId);
        return Response.ok(new TrainingModelDeleted().modelId(deleted.modelId())
                .deletedCheckpoints(deleted.deletedCheckpoints()).deletedRun(deleted.deletedRun())).build();
    }

    @Override
    public Response listCheckpoints(String modelId, String after, Integer limit, String order) {
        return Response.ok(TrainingMapper.checkpoints(checkpoints.list(modelId, after, limit, order))).build();
    }

    @Override
    public Response listModelTrainingJobs(String modelId, String after, Integer limit) {
        return Response.ok(TrainingMapper.jobs(jobs.ofModel(modelId, after, limit))).build();
    }

    @Override
    public Response deleteCheckpoints(String modelId, TrainingCheckpointsDelete req) {
        Checkpoints.Deleted deleted = checkpoints.delete(modelId, req.getSteps());
        return Response.ok(new TrainingCheckpointsDeleted().deletedCount(deleted.deletedCount())
                .notFoundSteps(deleted.notFoundSteps())).build();
    }

    @Override
    public Response logTrajectories(String modelId, TrainingLogRequest req) {
        TrainingLogRequest body = req;
        logs.log(modelId, body.getModelId(), body.getTrajectoryGroups(), body.getSplit());
        return Response.noContent().build();
    }

    @Override
    public Response listLoggedTrajectories(String modelId, String after, Integer limit) {
        return Response.ok(TrainingMapper.logs(logs.list(modelId, after, limit))).build();
    }
}

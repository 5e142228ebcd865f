package dev.fulcrum.training;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.training.api.TrainingJobsApi;
import dev.fulcrum.training.api.model.TrainingJobCreate;
import dev.fulcrum.training.api.model.TrainingJobRef;
import dev.fulcrum.training.api.model.TrainingSftJobCreate;

public class TrainingJobsResource implements TrainingJobsApi {

    @Inject
    TrainingJobs jobs;

    @Override
    public Response createTrainingJob(TrainingJobCreate req) {
        TrainingJobCreate body = req;
        String id = jobs.createRl(body.getModelId(), body.getTrajectoryGroups(), body.getExperimentalConfig());
        return Response.accepted(new TrainingJobRef().id(id)).build();
    }

    @Override
    public Response createSftTrainingJob(TrainingSftJobCreate req) {
        TrainingSftJobCreate body = req;
        String id = jobs.createSft(body.getModelId(), body.getTrainingDataUrl(), body.getConfig(),
                body.getExperimentalConfig());
        return Response.accepted(new TrainingJobRef().id(id)).build();
    }

    @Override
    public Response getTrainingJob(String trainingJobId) {
        return Response.ok(TrainingMapper.job(jobs.get(trainingJobId, Role.VIEWER))).build();
    }

    @Override
    public Response cancelTrainingJob(String trainingJobId) {
        return Response.ok(TrainingMapper.job(jobs.cancel(trainingJobId))).build();
    }

    @Override
    public Response listTrainingJobEvents(String trainingJobId, String after, Integer limit) {
        return Response.ok(TrainingMapper.events(jobs.events(trainingJobId, after, limit))).build();
    }
}

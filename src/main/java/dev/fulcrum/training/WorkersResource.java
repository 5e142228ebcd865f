package dev.fulcrum.training;

import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.vertx.core.http.HttpServerRequest;

import dev.fulcrum.accounts.AuthenticatesWithSignedToken;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.JsonInput;
import dev.fulcrum.training.JobQueue.Claimed;
import dev.fulcrum.training.api.WorkersApi;
import dev.fulcrum.training.api.model.TrainingWorker;
import dev.fulcrum.training.api.model.TrainingWorkerClaim;
import dev.fulcrum.training.api.model.TrainingWorkerClaimBaseCheckpoint;
import dev.fulcrum.training.api.model.TrainingWorkerEvent;
import dev.fulcrum.training.api.model.TrainingWorkerFailure;
import dev.fulcrum.training.api.model.TrainingWorkerFileRef;
import dev.fulcrum.training.api.model.TrainingWorkerFinish;
import dev.fulcrum.training.api.model.TrainingWorkerLease;
import dev.fulcrum.training.api.model.TrainingWorkerRegistration;

public class WorkersResource implements WorkersApi {

    private static final ObjectMapper JSON = JsonInput.configure(new ObjectMapper());

    @Inject
    Workers workers;

    @Inject
    TrainingSettings settings;

    @Context
    HttpHeaders headers;

    @Context
    HttpServerRequest request;

    private Claimed job(String jobId) {
        return workers.job(headers.getHeaderString(HttpHeaders.AUTHORIZATION), jobId);
    }

    private int leaseSeconds() {
        return (int) settings.lease().toSeconds();
    }

    @Override
    public Response registerWorker(TrainingWorkerRegistration req) {
        TrainingWorkerRegistration body = req;
        Workers.WorkerView worker = workers.register(body.getName(), body.getBaseModels());
        return Response.status(201).entity(new TrainingWorker().id(worker.id()).name(worker.name())
                .baseModels(worker.baseModels()).leaseSeconds(leaseSeconds())).build();
    }

    @Override
    public Response claimJob(String workerId, Integer wait) {
        // a worker that went away during the long poll (it stopped, its connection closed) is handed no job
        Workers.Claim claim = workers.claim(workerId, wait, () -> !request.response().closed());
        if (claim == null) {
            return Response.noContent().build();
        }
        Claimed job = claim.job();
        return Response.ok(new TrainingWorkerClaim().jobId(job.id())
                .kind(TrainingWorkerClaim.KindEnum.fromValue(job.kind())).attempt(job.attempt()).token(claim.token())
                .leaseSeconds(leaseSeconds()).leaseExpiresAt(job.leaseUntil()).model(TrainingMapper.model(job.model()))
                .baseCheckpoint(new TrainingWorkerClaimBaseCheckpoint().step(job.baseStep())
                        .files(claim.baseFiles().stream()
                                .map(f -> new TrainingWorkerFileRef().path(f.path()).size(f.size()).digest(f.digest()))
                                .toList())))
                .build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response getJobInput(String trainingJobId) {
        return Response.ok(workers.input(job(trainingJobId))).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response downloadBaseCheckpoint(String trainingJobId, String path) {
        FileView file = workers.baseFile(job(trainingJobId), path);
        return Response.ok(workers.open(file), "application/octet-stream").header("Content-Length", file.size())
                .build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response heartbeatJob(String trainingJobId) {
        Claimed job = job(trainingJobId);
        boolean cancel = workers.heartbeat(job);
        return Response.ok(new TrainingWorkerLease().cancelRequested(cancel).leaseExpiresAt(job.leaseUntil())).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response postJobEvent(String trainingJobId, TrainingWorkerEvent req) {
        TrainingWorkerEvent body = req;
        Claimed job = job(trainingJobId);
        ObjectNode data = body.getData() == null ? null : JSON.valueToTree(body.getData());
        boolean cancel = workers.event(job, body.getType() == null ? null : body.getType().toString(), data);
        return Response.ok(new TrainingWorkerLease().cancelRequested(cancel).leaseExpiresAt(job.leaseUntil())).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response uploadCheckpointFile(String trainingJobId, String path, InputStream body) {
        FileView file = workers.upload(job(trainingJobId), path, body);
        return Response.ok(new TrainingWorkerFileRef().path(file.path()).size(file.size()).digest(file.digest()))
                .build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response finishJob(String trainingJobId, TrainingWorkerFinish req) {
        Map<String, Double> metrics = new LinkedHashMap<>();
        if (req != null && req.getMetrics() != null) {
            req.getMetrics().forEach((name, value) -> {
                if (value == null) {
                    throw ApiException.invalid(Violation.of("Must be a number", "float_type", "body", "metrics", name));
                }
                metrics.put(name, value.doubleValue());
            });
        }
        return Response.ok(TrainingMapper.job(workers.finish(job(trainingJobId), metrics))).build();
    }

    @Override
    @AuthenticatesWithSignedToken
    public Response failJob(String trainingJobId, TrainingWorkerFailure req) {
        TrainingWorkerFailure body = req;
        return Response.ok(TrainingMapper.job(workers.fail(job(trainingJobId), body.getErrorMessage()))).build();
    }
}

package dev.fulcrum.runs;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.runs.api.RunsApi;
import dev.fulcrum.runs.api.model.HistoryLogged;
import dev.fulcrum.runs.api.model.HistoryPage;
import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.runs.api.model.RunCreate;
import dev.fulcrum.runs.api.model.RunPage;
import dev.fulcrum.runs.api.model.RunState;
import dev.fulcrum.runs.api.model.RunStateChange;
import dev.fulcrum.runs.api.model.RunStateChanges;
import dev.fulcrum.runs.api.model.RunStop;
import dev.fulcrum.runs.api.model.RunUpdate;

public class RunsResource implements RunsApi {

    @Inject
    RunService runs;

    @Inject
    RunFileAnswers files;

    @Inject
    RunStops stops;

    @Override
    public Response stopRun(String entity, String project, String run) {
        RunStops.Stop stop = stops.request(entity, project, run);
        return Response.ok(new RunStop().run(stop.run().name()).state(RunState.fromValue(stop.run().state()))
                .stopRequestedAt(stop.requestedAt())).build();
    }

    @Override
    public Response getRunStop(String entity, String project, String run) {
        RunService.RunView view = runs.get(entity, project, run);
        return Response.ok(new RunStop().run(view.name()).state(RunState.fromValue(view.state()))
                .stopRequestedAt(stops.requested(entity, project, run))).build();
    }

    @Override
    public Response listRunFiles(String entity, String project, String run, List<String> names, String after,
            Integer limit) {
        return files.listRunFiles(entity, project, run, names, after, limit);
    }

    @Override
    public Response downloadRunFile(String entity, String project, String run, String name, String range,
            String ifNoneMatch) {
        return files.downloadRunFile(entity, project, run, name, range, ifNoneMatch);
    }

    @Override
    public Response listRunMedia(String entity, String project, String run, Integer limit, Integer offset) {
        return files.listRunMedia(entity, project, run, limit, offset);
    }

    @Override
    public Response createRun(String entity, String project, RunCreate req) {
        RunCreate body = req == null ? new RunCreate() : req;
        return Response.status(201)
                .entity(toRun(runs.create(entity, project, body.getName(), body.getDisplayName(), body.getConfig())))
                .build();
    }

    @Override
    public Response listRuns(String entity, String project, String name, String creator, String state, Integer limit,
            Integer offset) {
        RunService.Page<RunService.RunView> page = runs.list(entity, project, name, creator, state, limit, offset);
        return Response.ok(new RunPage().runs(page.items().stream().map(RunsResource::toRun).toList())
                .nextOffset(page.nextOffset())).build();
    }

    @Override
    public Response getRun(String entity, String project, String run) {
        return Response.ok(toRun(runs.get(entity, project, run))).build();
    }

    @Override
    public Response updateRun(String entity, String project, String run, RunUpdate req) {
        return Response.ok(toRun(runs.update(entity, project, run, req.getState(), req.getDisplayName()))).build();
    }

    @Override
    public Response logHistory(String entity, String project, String run, List<ObjectNode> rows) {
        RunService.Logged logged = runs.log(entity, project, run, rows);
        return Response
                .ok(new HistoryLogged().rows(logged.rows()).values((int) logged.values()).lastStep(logged.lastStep()))
                .build();
    }

    @Override
    public Response getHistory(String entity, String project, String run, List<String> keys, Integer limit,
            Integer offset) {
        RunService.Page<ObjectNode> page = runs.history(entity, project, run, keys, limit, offset);
        return Response.ok(new HistoryPage().rows(page.items()).nextOffset(page.nextOffset())).build();
    }

    @Override
    public Response listRunStateChanges(String entity, String project, String run) {
        return Response.ok(new RunStateChanges().changes(runs.stateChanges(entity, project, run).stream()
                .map(change -> new RunStateChange().state(RunState.fromValue(change.state()))
                        .previousState(change.previous()).changedAt(change.at()).changedBy(change.by()))
                .toList())).build();
    }

    @Override
    public Response getSummary(String entity, String project, String run) {
        return Response.ok(runs.summary(entity, project, run)).build();
    }

    static Run toRun(RunService.RunView run) {
        return new Run().id(run.id()).name(run.name()).displayName(run.displayName()).entity(run.entity())
                .project(run.project()).state(RunState.fromValue(run.state())).config(run.config())
                .createdBy(run.createdBy()).createdAt(run.createdAt()).updatedAt(run.updatedAt())
                .lastStep(run.lastStep()).historyRows(run.historyRows());
    }
}

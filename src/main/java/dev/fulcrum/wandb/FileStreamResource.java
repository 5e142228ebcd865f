package dev.fulcrum.wandb;

import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.wandb.api.WandbFileStreamApi;
import dev.fulcrum.wandb.api.model.WandbFileStreamRequest;
import dev.fulcrum.wandb.api.model.WandbFileStreamResult;

public class FileStreamResource implements WandbFileStreamApi {

    @Inject
    RunFileStream stream;

    @Override
    public Response streamRunFiles(String entity, String project, String run, WandbFileStreamRequest req) {
        boolean stopped = stream.apply(entity, project, run, req);
        return Response.ok(new WandbFileStreamResult().limits(Map.of()).stopped(stopped)).build();
    }
}

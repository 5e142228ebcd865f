package dev.fulcrum.datasets;

import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.datasets.api.DatasetsApi;
import dev.fulcrum.datasets.api.model.DatasetCreateReq;
import dev.fulcrum.datasets.api.model.DatasetDeleteRes;

public class DatasetsResource implements DatasetsApi {

    public static final String JSONL = "application/jsonl";

    @Inject
    DatasetService datasets;

    @Inject
    DatasetReads reads;

    @Inject
    ObjectMapper json;

    @Override
    public Response datasetCreate(String entity, String project, DatasetCreateReq req) {
        return Response.ok(DatasetMapper
                .toCreateRes(datasets.create(entity, project, req.getName(), req.getDescription(), req.getRows())))
                .build();
    }

    @Override
    public Response datasetRead(String entity, String project, String objectId, String digest) {
        return Response.ok(reads.readJson(entity, project, objectId, digest), MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    public Response datasetList(String entity, String project, Integer limit, Integer offset) {
        List<DatasetService.Version> versions = datasets.list(entity, project, limit, offset);
        StreamingOutput body = output -> {
            OutputStream out = new BufferedOutputStream(output, 16384);
            for (DatasetService.Version version : versions) {
                out.write(json.writeValueAsBytes(DatasetMapper.toReadRes(version)));
                out.write('\n');
            }
            out.flush();
        };
        return Response.ok(body, JSONL).build();
    }

    @Override
    public Response datasetDelete(String entity, String project, String objectId, List<String> digests) {
        return Response.ok(new DatasetDeleteRes().numDeleted(datasets.delete(entity, project, objectId, digests)))
                .build();
    }
}

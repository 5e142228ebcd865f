package dev.fulcrum.traces;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.CostsApi;
import dev.fulcrum.datasets.api.model.CostQueryReq;
import dev.fulcrum.datasets.api.model.CostQueryRes;

/** Weave's cost query: Fulcrum records no LLM costs, so a project the caller may read has none. */
public class CostsResource implements CostsApi {

    @Inject
    Access access;

    @Override
    public Response costQuery(CostQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        access.readableProject(name.entity(), name.project());
        return Response.ok(new CostQueryRes().results(List.of())).build();
    }
}

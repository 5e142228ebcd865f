package dev.fulcrum.inference.gateway;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.api.InferenceUsageApi;

public class UsageResource implements InferenceUsageApi {

    @Inject
    Access access;

    @Inject
    UsageReports reports;

    @Override
    public Response getInferenceUsage(String entity, String project, String from, String to, String groupBy) {
        UsageReports.Query query = UsageReports.Query.of(entity, project, from, to, groupBy);
        access.entity(entity, Role.VIEWER);
        return Response.ok(reports.report(query)).build();
    }
}

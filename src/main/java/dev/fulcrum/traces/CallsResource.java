package dev.fulcrum.traces;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.datasets.DatasetsResource;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.CallsApi;
import dev.fulcrum.datasets.api.model.CallBatchItem;
import dev.fulcrum.datasets.api.model.CallEndReq;
import dev.fulcrum.datasets.api.model.CallReadReq;
import dev.fulcrum.datasets.api.model.CallStartReq;
import dev.fulcrum.datasets.api.model.CallStartRes;
import dev.fulcrum.datasets.api.model.CallUpdateReq;
import dev.fulcrum.datasets.api.model.CallUpsertBatchReq;
import dev.fulcrum.datasets.api.model.CallUpsertBatchRes;
import dev.fulcrum.datasets.api.model.CallsCompleteReq;
import dev.fulcrum.datasets.api.model.CallsDeleteReq;
import dev.fulcrum.datasets.api.model.CallsDeleteRes;
import dev.fulcrum.datasets.api.model.CallsQueryReq;
import dev.fulcrum.datasets.api.model.CallsQueryStatsReq;
import dev.fulcrum.datasets.api.model.CallsQueryStatsRes;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Weave's call endpoints: the SDKs' write paths (single, legacy batch, whole calls) and the filtered reads. */
public class CallsResource implements CallsApi {

    @Inject
    CallWrites calls;

    @Inject
    CallQueries queries;

    @Inject
    ObjectMapper json;

    @Override
    public Response callStart(CallStartReq req) {
        return Response.ok(started(calls.start(List.of(req.getStart()), null, "body", "start").get(0))).build();
    }

    @Override
    public Response callStartV2(String entity, String project, CallStartReq req) {
        return Response.ok(started(calls.start(List.of(req.getStart()), path(entity, project), "body", "start").get(0)))
                .build();
    }

    @Override
    public Response callEnd(CallEndReq req) {
        calls.end(List.of(req.getEnd()), null, "body", "end");
        return Response.ok(json.createObjectNode()).build();
    }

    @Override
    public Response callEndV2(String entity, String project, CallEndReq req) {
        calls.end(List.of(req.getEnd()), path(entity, project), "body", "end");
        return Response.ok(json.createObjectNode()).build();
    }

    @Override
    public Response callUpsertBatch(CallUpsertBatchReq req) {
        CallUpsertBatchRes res = new CallUpsertBatchRes().res(new java.util.ArrayList<>());
        // in order, so that a start and its end in one batch meet; each item its own statement's upsert
        for (int i = 0; i < req.getBatch().size(); i++) {
            CallBatchItem item = req.getBatch().get(i);
            if (item.getMode() == CallBatchItem.ModeEnum.START && item.getReq().getStart() != null) {
                CallWrites.Started s = calls
                        .start(List.of(item.getReq().getStart()), null, "body", "batch", i, "req", "start").get(0);
                res.getRes().add(started(s));
            } else if (item.getMode() == CallBatchItem.ModeEnum.END && item.getReq().getEnd() != null) {
                calls.end(List.of(item.getReq().getEnd()), null, "body", "batch", i, "req", "end");
                res.getRes().add(
                        new CallStartRes().id(item.getReq().getEnd().getId()).traceId(item.getReq().getEnd().getId()));
            } else {
                throw ApiException.invalid(Violation.of("A " + item.getMode() + " item needs req." + item.getMode(),
                        "missing", "body", "batch", i, "req", item.getMode().toString()));
            }
        }
        return Response.ok(res).build();
    }

    @Override
    public Response callsComplete(String entity, String project, CallsCompleteReq req) {
        calls.complete(req.getBatch(), path(entity, project));
        return Response.ok(json.createObjectNode()).build();
    }

    @Override
    public Response callRead(CallReadReq req) {
        return Response
                .ok(queries.read(WeaveObjects.projectName(req.getProjectId(), "body", "project_id"), req.getId()),
                        MediaType.APPLICATION_JSON_TYPE)
                .build();
    }

    @Override
    public Response callsStreamQuery(CallsQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        boolean feedback = Boolean.TRUE.equals(req.getIncludeFeedback());
        return Response.ok(queries.query(name,
                new CallQueries.Query(req.getFilter(), req.getQuery() == null ? null : req.getQuery().get$Expr(),
                        req.getSortBy(), req.getLimit(), req.getOffset(), feedback),
                CallQueries.columns(req.getColumns(), feedback)), DatasetsResource.JSONL).build();
    }

    @Override
    public Response callsQueryStats(CallsQueryStatsReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        long count = queries.count(name, new CallQueries.Query(req.getFilter(),
                req.getQuery() == null ? null : req.getQuery().get$Expr(), null, req.getLimit(), null, false));
        return Response.ok(new CallsQueryStatsRes().count(count)).build();
    }

    @Override
    public Response callsDelete(CallsDeleteReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        return Response.ok(new CallsDeleteRes().numDeleted(calls.delete(name, req.getCallIds()))).build();
    }

    @Override
    public Response callUpdate(CallUpdateReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        calls.rename(name, req.getCallId(), req.getDisplayName());
        return Response.ok(json.createObjectNode()).build();
    }

    private static WeaveObjects.ProjectName path(String entity, String project) {
        return new WeaveObjects.ProjectName(entity, project);
    }

    private static CallStartRes started(CallWrites.Started started) {
        return new CallStartRes().id(started.id()).traceId(started.traceId());
    }
}

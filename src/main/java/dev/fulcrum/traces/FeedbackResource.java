package dev.fulcrum.traces;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.FeedbackApi;
import dev.fulcrum.datasets.api.model.FeedbackBatchCreateReq;
import dev.fulcrum.datasets.api.model.FeedbackBatchCreateRes;
import dev.fulcrum.datasets.api.model.FeedbackCreateReq;
import dev.fulcrum.datasets.api.model.FeedbackCreateRes;
import dev.fulcrum.datasets.api.model.FeedbackPurgeReq;
import dev.fulcrum.datasets.api.model.FeedbackQueryReq;
import dev.fulcrum.datasets.api.model.FeedbackQueryRes;

/** Weave's feedback endpoints. */
public class FeedbackResource implements FeedbackApi {

    @Inject
    WeaveFeedback feedback;

    @Inject
    ObjectMapper json;

    @Override
    public Response feedbackCreate(FeedbackCreateReq req) {
        return Response.ok(res(feedback.create(List.of(req)).get(0))).build();
    }

    @Override
    public Response feedbackBatchCreate(FeedbackBatchCreateReq req) {
        return Response
                .ok(new FeedbackBatchCreateRes().res(
                        feedback.create(req.getBatch(), "body", "batch").stream().map(FeedbackResource::res).toList()))
                .build();
    }

    @Override
    public Response feedbackQuery(FeedbackQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        return Response.ok(new FeedbackQueryRes()
                .result(feedback.query(name, req.getFields(), req.getQuery() == null ? null : req.getQuery().get$Expr(),
                        req.getSortBy(), req.getLimit(), req.getOffset())))
                .build();
    }

    @Override
    public Response feedbackPurge(FeedbackPurgeReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        feedback.purge(name, req.getQuery() == null ? null : req.getQuery().get$Expr());
        return Response.ok(json.createObjectNode()).build();
    }

    private static FeedbackCreateRes res(WeaveFeedback.Created created) {
        return new FeedbackCreateRes().id(created.id()).createdAt(created.createdAt()).wbUserId(created.wbUserId())
                .payload(created.payload());
    }
}

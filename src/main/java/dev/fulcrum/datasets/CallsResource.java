package dev.fulcrum.datasets;

import java.io.IOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Set;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

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
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/** Weave's call endpoints: the SDKs' write paths (single, legacy batch, whole calls) and the filtered reads. */
public class CallsResource implements CallsApi {

    @Inject
    WeaveCalls calls;

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
                WeaveCalls.Started s = calls
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
        WeaveCalls.Call call = calls.read(WeaveObjects.projectName(req.getProjectId(), "body", "project_id"),
                req.getId());
        StreamingOutput body = output -> {
            try (JsonGenerator out = json.getFactory().createGenerator(output)) {
                out.writeStartObject();
                out.writeFieldName("call");
                if (call == null) {
                    out.writeNull();
                } else {
                    write(call, WeaveCalls.columns(null), out);
                }
                out.writeEndObject();
            }
        };
        return Response.ok(body, MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    public Response callsStreamQuery(CallsQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        List<WeaveCalls.Call> found = calls.query(name,
                new WeaveCalls.Query(req.getFilter(), req.getQuery() == null ? null : req.getQuery().get$Expr(),
                        req.getSortBy(), req.getLimit(), req.getOffset()));
        Set<String> columns = WeaveCalls.columns(req.getColumns());
        // one generator for the whole page (a generator per line cost a quarter of the request's time): each call is a
        // root value ending in its own newline, with no separator of Jackson's between them
        StreamingOutput body = output -> {
            try (JsonGenerator out = json.getFactory().createGenerator(output)) {
                out.setRootValueSeparator(null);
                for (WeaveCalls.Call call : found) {
                    write(call, columns, out);
                    out.writeRaw('\n');
                }
            }
        };
        return Response.ok(body, DatasetsResource.JSONL).build();
    }

    @Override
    public Response callsQueryStats(CallsQueryStatsReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        long count = calls.count(name, new WeaveCalls.Query(req.getFilter(),
                req.getQuery() == null ? null : req.getQuery().get$Expr(), null, req.getLimit(), null));
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

    private static CallStartRes started(WeaveCalls.Started started) {
        return new CallStartRes().id(started.id()).traceId(started.traceId());
    }

    /**
     * One call; stored JSON goes out as it is. {@code summary.weave} gets the status, trace name and latency the hosted
     * server derives, as Weave's readers (the SDK, the UI) expect them there.
     */
    private void write(WeaveCalls.Call c, Set<String> columns, JsonGenerator out) throws IOException {
        out.writeStartObject();
        out.writeStringField("id", c.id());
        out.writeStringField("project_id", c.projectId());
        out.writeStringField("op_name", c.opName());
        if (columns.contains("display_name")) {
            out.writeStringField("display_name", c.displayName());
        }
        out.writeStringField("trace_id", c.traceId());
        if (columns.contains("parent_id")) {
            out.writeStringField("parent_id", c.parentId());
        }
        if (columns.contains("thread_id")) {
            out.writeStringField("thread_id", c.threadId());
        }
        if (columns.contains("turn_id")) {
            out.writeStringField("turn_id", c.turnId());
        }
        time(out, "started_at", c.startedAt());
        if (columns.contains("ended_at")) {
            time(out, "ended_at", c.endedAt());
        }
        if (columns.contains("exception")) {
            out.writeStringField("exception", c.exception());
        }
        raw(out, columns, "attributes", c.attributes(), "{}");
        raw(out, columns, "inputs", c.inputs(), "{}");
        raw(out, columns, "output", c.output(), "null");
        if (columns.contains("summary")) {
            out.writeFieldName("summary");
            out.writeTree(summary(c));
        }
        if (columns.contains("wb_user_id")) {
            out.writeStringField("wb_user_id", c.wbUserId());
        }
        if (columns.contains("wb_run_id")) {
            out.writeStringField("wb_run_id", c.wbRunId());
        }
        if (columns.contains("wb_run_step")) {
            out.writeObjectField("wb_run_step", c.wbRunStep());
        }
        if (columns.contains("wb_run_step_end")) {
            out.writeObjectField("wb_run_step_end", c.wbRunStepEnd());
        }
        if (columns.contains("deleted_at")) {
            time(out, "deleted_at", c.deletedAt());
        }
        out.writeEndObject();
    }

    private ObjectNode summary(WeaveCalls.Call c) throws IOException {
        JsonNode stored = c.summary() == null ? null : json.readTree(c.summary());
        ObjectNode summary = stored != null && stored.isObject() ? (ObjectNode) stored : json.createObjectNode();
        ObjectNode weave = summary.has("weave") && summary.get("weave").isObject() ? (ObjectNode) summary.get("weave")
                : summary.putObject("weave");
        weave.put("status", c.exception() != null ? "error" : c.endedAt() == null ? "running" : "success");
        weave.put("trace_name", c.displayName() != null ? c.displayName() : opShortName(c.opName()));
        if (c.endedAt() != null && c.startedAt() != null) {
            weave.put("latency_ms", Duration.between(c.startedAt(), c.endedAt()).toMillis());
        }
        return summary;
    }

    /** {@code weave:///e/p/op/name:digest} is {@code name}; a plain name is itself. */
    static String opShortName(String opName) {
        if (opName == null) {
            return null;
        }
        int slash = opName.lastIndexOf('/');
        String tail = slash >= 0 ? opName.substring(slash + 1) : opName;
        int colon = opName.startsWith("weave:") ? tail.lastIndexOf(':') : -1;
        return colon > 0 ? tail.substring(0, colon) : tail;
    }

    private static void raw(JsonGenerator out, Set<String> columns, String field, String value, String absent)
            throws IOException {
        if (columns.contains(field)) {
            out.writeFieldName(field);
            out.writeRawValue(value == null ? absent : value);
        }
    }

    private static void time(JsonGenerator out, String field, OffsetDateTime value) throws IOException {
        out.writeStringField(field, value == null ? null : value.toInstant().toString());
    }
}

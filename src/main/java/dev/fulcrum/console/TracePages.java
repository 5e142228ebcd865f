package dev.fulcrum.console;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.datasets.api.CallsApi;
import dev.fulcrum.datasets.api.ObjectsApi;
import dev.fulcrum.datasets.api.TablesApi;
import dev.fulcrum.datasets.api.model.CallReadReq;
import dev.fulcrum.datasets.api.model.CallSortBy;
import dev.fulcrum.datasets.api.model.CallsFilter;
import dev.fulcrum.datasets.api.model.CallsQueryReq;
import dev.fulcrum.datasets.api.model.ObjReadReq;
import dev.fulcrum.datasets.api.model.ObjReadRes;
import dev.fulcrum.datasets.api.model.Query;
import dev.fulcrum.datasets.api.model.TableQueryReq;
import dev.fulcrum.datasets.api.model.TableQueryRes;
import dev.fulcrum.datasets.api.model.TableRow;
import dev.fulcrum.datasets.api.model.TableRowFilter;
import dev.fulcrum.platform.errors.ApiException;

/**
 * A project's traces, read through Weave's call operations ({@code /calls/stream_query}, {@code /call/read}) and, for
 * an evaluation's rows, {@code /obj/read} and {@code /table/query}: the calls, newest first, filtered by op, start time
 * and status; a call's inputs, output, timing and the tree of its descendants; and for an {@code Evaluation.evaluate}
 * call its summary by scorer and its rows with each scorer's result. Whoever the API lets read the project reads these;
 * nothing here changes anything.
 */
@Path("/console/projects/{entity}/{project}/traces")
@AuthenticatesWithSession
@Blocking
public class TracePages {

    static final int PAGE = 50;
    /** The most calls of one trace a call's page reads (the API's largest page). */
    static final int TRACE_CALLS = 10_000;
    /** The most rows of an evaluation its page shows. */
    static final int EVALUATION_ROWS = 1_000;
    static final List<String> STATUSES = List.of("success", "error", "running");
    private static final int BRIEF = 60;
    /** A dataset row's ref, as an evaluation's predict_and_score call names its example. */
    private static final Pattern ROW_REF = Pattern
            .compile("weave:///([^/]+)/([^/]+)/object/([^/:]+):([^/]+)/attr/rows/id/([^/]+)");

    @Inject
    CallsApi calls;

    @Inject
    ObjectsApi objects;

    @Inject
    TablesApi tables;

    @Inject
    ObjectMapper mapper;

    static String base(String entity, String project) {
        return DataPages.base(entity, project) + "/traces";
    }

    @GET
    public Response list(@RestPath String entity, @RestPath String project, @RestQuery String op,
            @RestQuery String from, @RestQuery String to, @RestQuery String status, @RestQuery String all,
            @RestQuery Integer offset) {
        TraceTemplates.Filters filters = new TraceTemplates.Filters(text(op), text(from), text(to), text(status),
                "on".equals(all), offset == null ? 0 : offset);
        return Pages.page(() -> listPage(entity, project, filters));
    }

    private TemplateInstance listPage(String entity, String project, TraceTemplates.Filters filters) {
        String projectId = entity + "/" + project;
        CallsFilter filter = new CallsFilter();
        if (!filters.op().isEmpty()) {
            filter.opNames(List.of(filters.op().startsWith("weave:///") ? filters.op()
                    : "weave:///" + projectId + "/op/" + filters.op() + ":*"));
        }
        if (!filters.all()) {
            filter.traceRootsOnly(true);
        }
        ArrayNode conditions = mapper.createArrayNode();
        if (!filters.from().isEmpty()) {
            conditions.add(compare("$gte", "started_at", instant("from", filters.from())));
        }
        if (!filters.to().isEmpty()) {
            conditions.add(compare("$lt", "started_at", instant("to", filters.to())));
        }
        if (!filters.status().isEmpty()) {
            if (!STATUSES.contains(filters.status())) {
                throw new Pages.FormException("status", "Status must be one of " + String.join(", ", STATUSES));
            }
            conditions.add(compare("$eq", "summary.weave.status", filters.status()));
        }
        CallsQueryReq query = new CallsQueryReq().projectId(projectId).filter(filter)
                .sortBy(List.of(new CallSortBy().field("started_at").direction(CallSortBy.DirectionEnum.DESC)))
                .limit(PAGE + 1).offset(filters.offset())
                .columns(List.of("id", "op_name", "display_name", "started_at", "ended_at", "exception", "summary"));
        if (!conditions.isEmpty()) {
            query.query(new Query().$expr(mapper.createObjectNode().set("$and", conditions)));
        }
        List<JsonNode> found = ApiBodies.lines(mapper, calls.callsStreamQuery(query), JsonNode.class);
        Integer next = found.size() > PAGE ? filters.offset() + PAGE : null;
        List<TraceTemplates.CallView> shown = found.stream().limit(PAGE).map(c -> view(c, 0)).toList();
        return TraceTemplates.traces(entity, project, DataPages.base(entity, project), filters, shown, next, STATUSES);
    }

    private ObjectNode compare(String operator, String field, String literal) {
        ArrayNode operands = mapper.createArrayNode();
        operands.add(mapper.createObjectNode().put("$getField", field));
        operands.add(mapper.createObjectNode().put("$literal", literal));
        return mapper.createObjectNode().set(operator, operands);
    }

    /** A form's date and time (a datetime-local field, in UTC) as the API's timestamp. */
    private static String instant(String field, String value) {
        try {
            return LocalDateTime.parse(value).atOffset(ZoneOffset.UTC).toString();
        } catch (DateTimeParseException e) {
            throw new Pages.FormException(field, "Not a date and time (2026-01-31T13:45): " + value);
        }
    }

    @GET
    @Path("/{call}")
    public Response call(@RestPath String entity, @RestPath String project, @RestPath String call) {
        return Pages.page(() -> callPage(entity, project, call));
    }

    private TemplateInstance callPage(String entity, String project, String id) {
        String projectId = entity + "/" + project;
        JsonNode read = ApiBodies
                .json(mapper, calls.callRead(new CallReadReq().projectId(projectId).id(id)), JsonNode.class)
                .path("call");
        if (read.isNull() || read.isMissingNode()) {
            throw ApiException.notFound("Call " + id + " not found in " + projectId);
        }
        TraceTemplates.CallView call = view(read, 0);
        List<JsonNode> trace = ApiBodies.lines(mapper,
                calls.callsStreamQuery(new CallsQueryReq().projectId(projectId)
                        .filter(new CallsFilter().traceIds(List.of(read.path("trace_id").asText())))
                        .sortBy(List.of(new CallSortBy().field("started_at").direction(CallSortBy.DirectionEnum.ASC)))
                        .limit(TRACE_CALLS).columns(List.of("id", "parent_id", "op_name", "display_name", "started_at",
                                "ended_at", "exception", "summary"))),
                JsonNode.class);
        Map<String, List<JsonNode>> children = new HashMap<>();
        for (JsonNode c : trace) {
            children.computeIfAbsent(c.path("parent_id").asText(""), k -> new ArrayList<>()).add(c);
        }
        List<TraceTemplates.CallView> tree = new ArrayList<>();
        tree.add(call);
        descend(id, 1, children, tree, new LinkedHashSet<>(Set.of(id)));
        String parent = read.path("parent_id").isTextual() ? read.path("parent_id").asText() : null;
        TraceTemplates.Evaluation evaluation = call.op().startsWith("Evaluation.evaluate")
                ? evaluation(projectId, id, read.path("output"))
                : null;
        return TraceTemplates.trace(entity, project, DataPages.base(entity, project), call, parent,
                read.path("trace_id").asText(), pretty(read.path("inputs")), pretty(read.path("output")),
                pretty(read.path("attributes")), pretty(read.path("summary")), tree, trace.size() >= TRACE_CALLS,
                evaluation);
    }

    /** The call's descendants, depth first in start order; {@code seen} guards against a parent cycle in the data. */
    private void descend(String id, int depth, Map<String, List<JsonNode>> children, List<TraceTemplates.CallView> tree,
            Set<String> seen) {
        for (JsonNode child : children.getOrDefault(id, List.of())) {
            String childId = child.path("id").asText();
            if (seen.add(childId)) {
                tree.add(view(child, depth));
                descend(childId, depth + 1, children, tree, seen);
            }
        }
    }

    private TraceTemplates.Evaluation evaluation(String projectId, String id, JsonNode output) {
        List<TraceTemplates.Metric> summary = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = output.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> scorer = it.next();
            flatten(scorer.getKey(), "", scorer.getValue(), summary);
        }
        List<JsonNode> runs = ApiBodies.lines(mapper,
                calls.callsStreamQuery(new CallsQueryReq().projectId(projectId)
                        .filter(new CallsFilter().parentIds(List.of(id))
                                .opNames(List.of("weave:///" + projectId + "/op/Evaluation.predict_and_score:*")))
                        .sortBy(List.of(new CallSortBy().field("started_at").direction(CallSortBy.DirectionEnum.ASC)))
                        .limit(EVALUATION_ROWS + 1).columns(List.of("id", "inputs", "output", "summary"))),
                JsonNode.class);
        boolean more = runs.size() > EVALUATION_ROWS;
        if (more) {
            runs = runs.subList(0, EVALUATION_ROWS);
        }
        Map<String, JsonNode> examples = examples(projectId, runs);
        Set<String> scorers = new LinkedHashSet<>();
        for (JsonNode run : runs) {
            run.path("output").path("scores").fieldNames().forEachRemaining(scorers::add);
        }
        List<TraceTemplates.EvaluationRow> rows = new ArrayList<>();
        for (JsonNode run : runs) {
            JsonNode example = run.path("inputs").path("example");
            JsonNode resolved = example.isTextual() ? examples.getOrDefault(example.asText(), example) : example;
            List<DataTemplates.Cell> scores = new ArrayList<>();
            for (String scorer : scorers) {
                scores.add(cell(run.path("output").path("scores").get(scorer)));
            }
            rows.add(new TraceTemplates.EvaluationRow(rows.size(), cell(resolved),
                    cell(run.path("output").get("output")), scores, run.path("id").asText(), status(run)));
        }
        return new TraceTemplates.Evaluation(summary, List.copyOf(scorers), rows, more);
    }

    /**
     * The dataset rows the runs name by ref ({@code .../object/{dataset}:{digest}/attr/rows/id/{row digest}}), read
     * with one {@code /obj/read} per dataset version and one {@code /table/query} of just those rows' digests.
     */
    private Map<String, JsonNode> examples(String projectId, List<JsonNode> runs) {
        Map<String, Set<String>> wanted = new LinkedHashMap<>();
        for (JsonNode run : runs) {
            Matcher ref = ROW_REF.matcher(run.path("inputs").path("example").asText(""));
            if (ref.matches() && projectId.equals(ref.group(1) + "/" + ref.group(2))) {
                wanted.computeIfAbsent(ref.group(3) + ":" + ref.group(4), k -> new LinkedHashSet<>()).add(ref.group(5));
            }
        }
        Map<String, JsonNode> found = new HashMap<>();
        for (Map.Entry<String, Set<String>> dataset : wanted.entrySet()) {
            String[] name = dataset.getKey().split(":", 2);
            String rowsRef = ApiBodies.json(mapper,
                    objects.objRead(new ObjReadReq().projectId(projectId).objectId(name[0]).digest(name[1])),
                    ObjReadRes.class).getObj().getVal().path("rows").asText("");
            String table = rowsRef.substring(rowsRef.lastIndexOf('/') + 1);
            for (TableRow row : ApiBodies.json(mapper,
                    tables.tableQuery(new TableQueryReq().projectId(projectId).digest(table)
                            .filter(new TableRowFilter().rowDigests(List.copyOf(dataset.getValue())))),
                    TableQueryRes.class).getRows()) {
                found.put("weave:///" + projectId + "/object/" + dataset.getKey() + "/attr/rows/id/" + row.getDigest(),
                        row.getVal());
            }
        }
        return found;
    }

    private static void flatten(String scorer, String path, JsonNode value, List<TraceTemplates.Metric> into) {
        if (value.isObject() && value.size() > 0) {
            for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                flatten(scorer, path.isEmpty() ? field.getKey() : path + "." + field.getKey(), field.getValue(), into);
            }
        } else {
            into.add(new TraceTemplates.Metric(scorer, path, value.isTextual() ? value.asText() : value.toString()));
        }
    }

    static TraceTemplates.CallView view(JsonNode call, int depth) {
        JsonNode weave = call.path("summary").path("weave");
        return new TraceTemplates.CallView(call.path("id").asText(), shortName(call.path("op_name").asText("")),
                call.path("op_name").asText(""), call.path("display_name").asText(""), status(call),
                call.path("started_at").asText(""), call.path("ended_at").asText(""),
                weave.path("latency_ms").isNumber() ? weave.path("latency_ms").asLong() : null,
                call.path("exception").asText(""), depth);
    }

    private static String status(JsonNode call) {
        return call.path("summary").path("weave").path("status").asText("");
    }

    /** {@code weave:///e/p/op/name:digest} is {@code name}; anything else stays as it is. */
    static String shortName(String opName) {
        if (!opName.startsWith("weave:///")) {
            return opName;
        }
        String last = opName.substring(opName.lastIndexOf('/') + 1);
        int colon = last.lastIndexOf(':');
        return colon > 0 ? last.substring(0, colon) : last;
    }

    private static String pretty(JsonNode value) {
        return value == null || value.isMissingNode() || value.isNull() ? "" : value.toPrettyString();
    }

    private static DataTemplates.Cell cell(JsonNode value) {
        if (value == null || value.isMissingNode()) {
            return new DataTemplates.Cell("", false, null);
        }
        if (value.isContainerNode()) {
            String compact = value.toString();
            String brief = compact.length() > BRIEF ? compact.substring(0, BRIEF) + "…" : compact;
            return new DataTemplates.Cell(brief, true, value.toPrettyString());
        }
        return new DataTemplates.Cell(value.isTextual() ? value.asText() : value.toString(), false, null);
    }

    private static String text(String value) {
        return value == null ? "" : value.strip();
    }
}

package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import jakarta.inject.Inject;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.api.RunsApi;
import dev.fulcrum.runs.api.model.HistoryPage;
import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.runs.api.model.RunPage;
import dev.fulcrum.runs.api.model.RunStateChanges;
import dev.fulcrum.runs.api.model.RunStop;

/**
 * The runs of a project (filtered by name, creator and state) and a run: its config, summary, state changes, a Stop
 * button for members while it runs, and the line charts of its history, whose data the page's script reads from
 * {@code history.json} (see {@link HistoryColumns}).
 */
@Path("/console/projects/{entity}/{project}/runs")
@AuthenticatesWithSession
@Blocking
public class RunPages {

    static final int PAGE = 50;

    @Inject
    RunsApi runs;

    @Inject
    ConsoleRequest console;

    @Inject
    DataRoles roles;

    @GET
    public Response list(@RestPath String entity, @RestPath String project, @RestQuery String name,
            @RestQuery String creator, @RestQuery String state, @RestQuery Integer offset) {
        RunTemplates.Filters filters = new RunTemplates.Filters(text(name), text(creator), text(state),
                offset == null ? 0 : offset);
        List<String> states = List.of("running", "finished", "failed", "crashed", "killed");
        RunTemplates.Project where = new RunTemplates.Project(entity, project);
        try {
            RunPage page;
            try {
                page = Pages.body(runs.listRuns(entity, project, Pages.blankToNull(filters.name()),
                        Pages.blankToNull(filters.creator()), Pages.blankToNull(filters.state()), PAGE,
                        filters.offset()));
            } catch (ConstraintViolationException e) {
                throw Pages.refusal(e);
            }
            return Pages.html(RunTemplates.runs(where, filters, page.getRuns(), page.getNextOffset(), states));
        } catch (ApiException e) {
            if (Pages.status(e) != 422) {
                return Pages.errorPage(e);
            }
            // a filter the API refuses (a regular expression that is none) is named at its field
            console.failed(e);
            return Pages.again(422, () -> RunTemplates.runs(where, filters, List.of(), null, states));
        }
    }

    @GET
    @Path("/{run}")
    public Response run(@RestPath String entity, @RestPath String project, @RestPath String run,
            @RestQuery String metrics, @RestQuery String table, @RestQuery Integer rows) {
        return Pages.page(() -> runPage(entity, project, run, metrics, table, rows));
    }

    /**
     * Asks the run to stop (the runs API's {@code POST .../stop}: members only; the page shows the button to them
     * alone, and a viewer who posts anyway gets the API's refusal on the page).
     */
    @POST
    @Path("/{run}/stop")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response stop(@RestPath String entity, @RestPath String project, @RestPath String run) {
        return Pages.act(console, () -> runs.stopRun(entity, project, run),
                new RunTemplates.Project(entity, project).getPath() + "/runs/" + Pages.path(run),
                () -> runPage(entity, project, run, null, null, null));
    }

    private TemplateInstance runPage(String entity, String project, String run, String metrics, String table,
            Integer rows) {
        Run found = Pages.body(runs.getRun(entity, project, run));
        RunStop stop = Pages.body(runs.getRunStop(entity, project, run));
        ObjectNode summary = Pages.body(runs.getSummary(entity, project, run));
        RunStateChanges changes = Pages.body(runs.listRunStateChanges(entity, project, run));
        TreeSet<String> keys = new TreeSet<>();
        // the metrics: the summary's numbers (the W&B SDK's summary also holds its media, shown below the charts)
        summary.fields().forEachRemaining(field -> {
            if (field.getValue().isNumber()) {
                keys.add(field.getKey());
            }
        });
        keys.remove("_step");
        List<String> chosen = new ArrayList<>();
        for (String metric : text(metrics).split(",")) {
            if (keys.contains(metric.strip()) && !chosen.contains(metric.strip())) {
                chosen.add(metric.strip());
            }
        }
        if (chosen.isEmpty() && !keys.isEmpty()) {
            chosen.add(keys.first());
        }
        RunTemplates.Project where = new RunTemplates.Project(entity, project);
        RunMediaPanel.Media media = RunMediaPanel.read(runs, entity, project, run,
                where.getPath() + "/runs/" + Pages.path(run) + "/file?name=", text(table),
                rows == null ? 0 : Math.max(0, rows));
        return RunTemplates.run(where, found, entries(found.getConfig()), entries(summary), new ArrayList<>(keys),
                chosen, changes.getChanges(), media, stop,
                // the button while it runs and no stop was asked, for members only
                "running".equals(String.valueOf(found.getState())) && stop.getStopRequestedAt() == null
                        && roles.projectWriter(entity));
    }

    /**
     * A file of the run, as the runs API answers it (its type, one {@code Range}); the page's images and the links to
     * its files point here, so that the browser sends the console's session rather than an API key.
     */
    @GET
    @Path("/{run}/file")
    public Response file(@RestPath String entity, @RestPath String project, @RestPath String run,
            @RestQuery String name, @org.jboss.resteasy.reactive.RestHeader("Range") String range) {
        try {
            return runs.downloadRunFile(entity, project, run, text(name), range, null);
        } catch (ApiException e) {
            return Pages.errorPage(e);
        }
    }

    /**
     * The history of the chosen metrics as columns ready to draw: {@code {"x":[steps],"series":[{"name":..,
     * "values":[..]}],"rows":n}}, read through the API page by page and written as it goes; compressed (unlike the
     * API's JSON) when the browser accepts it, as numbers compress to about a third.
     */
    @GET
    @Path("/{run}/history.json")
    @Produces(MediaType.APPLICATION_JSON)
    public Response history(@RestPath String entity, @RestPath String project, @RestPath String run,
            @RestQuery String keys) {
        List<String> metrics = new ArrayList<>();
        for (String key : text(keys).split(",")) {
            String metric = key.strip();
            if (!metric.isEmpty() && !metric.equals("_step") && !metrics.contains(metric)) {
                metrics.add(metric);
            }
            if (metrics.size() > HistoryColumns.MAX_KEYS) {
                return historyError(ApiException.invalid(Violation
                        .of("Choose at most " + HistoryColumns.MAX_KEYS + " metrics", "too_long", "query", "keys")));
            }
        }
        try {
            HistoryColumns history;
            if (metrics.isEmpty()) {
                runs.getRun(entity, project, run);
                history = HistoryColumns.read(metrics, offset -> new HistoryPage().rows(List.of()));
            } else {
                history = HistoryColumns.read(metrics, offset -> Pages
                        .body(runs.getHistory(entity, project, run, metrics, HistoryColumns.PAGE, offset)));
            }
            return Response.ok(history.json(), MediaType.APPLICATION_JSON_TYPE).header("Cache-Control", "no-store")
                    .build();
        } catch (ApiException e) {
            return historyError(e);
        } catch (ConstraintViolationException e) {
            return historyError(Pages.refusal(e));
        }
    }

    private static Response historyError(ApiException e) {
        return Pages.jsonError(Pages.status(e), e.getMessage());
    }

    private static String text(String value) {
        return value == null ? "" : value.strip();
    }

    static List<RunTemplates.Entry> entries(ObjectNode object) {
        List<RunTemplates.Entry> entries = new ArrayList<>();
        if (object == null) {
            return entries;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> field = it.next();
            JsonNode value = field.getValue();
            entries.add(new RunTemplates.Entry(field.getKey(), value.isTextual() ? value.asText() : value.toString()));
        }
        entries.sort((a, b) -> a.key().compareTo(b.key()));
        return entries;
    }
}

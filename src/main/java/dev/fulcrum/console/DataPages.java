package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.artifacts.api.ArtifactsApi;
import dev.fulcrum.artifacts.api.model.Collection;
import dev.fulcrum.artifacts.api.model.CollectionList;
import dev.fulcrum.datasets.api.DatasetsApi;
import dev.fulcrum.datasets.api.ObjectsApi;
import dev.fulcrum.datasets.api.TablesApi;
import dev.fulcrum.datasets.api.model.DatasetReadRes;
import dev.fulcrum.datasets.api.model.ObjQueryReq;
import dev.fulcrum.datasets.api.model.ObjQueryRes;
import dev.fulcrum.datasets.api.model.ObjReadReq;
import dev.fulcrum.datasets.api.model.ObjReadRes;
import dev.fulcrum.datasets.api.model.ObjSchema;
import dev.fulcrum.datasets.api.model.ObjectVersionFilter;
import dev.fulcrum.datasets.api.model.TableQueryReq;
import dev.fulcrum.datasets.api.model.TableQueryRes;
import dev.fulcrum.datasets.api.model.TableQueryStatsReq;
import dev.fulcrum.datasets.api.model.TableQueryStatsRes;
import dev.fulcrum.datasets.api.model.TableRow;
import dev.fulcrum.events.api.ProjectEventsApi;
import dev.fulcrum.events.api.model.EventPage;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.runs.api.RunsApi;
import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.runs.api.model.RunPage;
import dev.fulcrum.training.api.ModelsApi;
import dev.fulcrum.training.api.model.TrainingModel;
import dev.fulcrum.training.api.model.TrainingModelPage;

/**
 * A project's overview and its datasets: the latest version of each, a dataset's versions, a version's rows a page at a
 * time (through Weave's {@code /objs/query}, {@code /obj/read}, {@code /table/query_stats} and {@code /table/query}),
 * and deleting a version. Whoever the API lets read a project reads these; its members delete.
 */
@Path("/console/projects/{entity}/{project}")
@AuthenticatesWithSession
@Blocking
public class DataPages {

    static final int ROWS_PER_PAGE = 50;
    private static final int OVERVIEW_ITEMS = 10;
    private static final int BRIEF = 60;

    @Inject
    ConsoleRequest console;

    @Inject
    DataRoles roles;

    @Inject
    ObjectMapper mapper;

    @Inject
    DatasetsApi datasets;

    @Inject
    ObjectsApi objects;

    @Inject
    TablesApi tables;

    @Inject
    ArtifactsApi artifacts;

    @Inject
    RunsApi runs;

    @Inject
    ModelsApi models;

    @Inject
    ProjectEventsApi events;

    static String base(String entity, String project) {
        return "/console/projects/" + Pages.path(entity) + "/" + Pages.path(project);
    }

    DataTemplates.Cell cell(JsonNode value) {
        if (value == null) {
            return new DataTemplates.Cell("", false, null);
        }
        if (value.isContainerNode()) {
            String compact = value.toString();
            String brief = compact.length() > BRIEF ? compact.substring(0, BRIEF) + "…" : compact;
            return new DataTemplates.Cell(brief, true, value.toPrettyString());
        }
        return new DataTemplates.Cell(value.isTextual() ? value.asText() : value.toString(), false, null);
    }

    @GET
    public Response overview(@RestPath String entity, @RestPath String project) {
        return Pages.page(() -> overviewPage(entity, project));
    }

    private TemplateInstance overviewPage(String entity, String project) {
        List<DatasetReadRes> latest = ApiBodies.lines(mapper, datasets.datasetList(entity, project, 100, 0),
                DatasetReadRes.class);
        List<Collection> collections = Pages.<CollectionList> body(artifacts.listCollections(entity, project, null))
                .getCollections();
        DataTemplates.Section<Run> recentRuns = section(() -> Pages
                .<RunPage> body(runs.listRuns(entity, project, null, null, null, OVERVIEW_ITEMS, 0)).getRuns());
        DataTemplates.Section<TrainingModel> trainingModels = section(() -> Pages
                .<TrainingModelPage> body(models.listModels(null, OVERVIEW_ITEMS, entity, project)).getData());
        DataTemplates.Section<DataTemplates.EventView> recent = section(
                () -> Pages.<EventPage> body(events.listProjectEvents(entity, project, 20, null)).getEvents().stream()
                        .map(e -> new DataTemplates.EventView(e, cell(e.getPayload()))).toList());
        return DataTemplates.project(entity, project, base(entity, project), latest, collections, recentRuns,
                trainingModels, recent);
    }

    private static <T> DataTemplates.Section<T> section(java.util.function.Supplier<List<T>> read) {
        try {
            return new DataTemplates.Section<>(read.get(), null);
        } catch (ApiException e) {
            return new DataTemplates.Section<>(List.of(), e.getMessage());
        }
    }

    @GET
    @Path("/datasets")
    public Response datasets(@RestPath String entity, @RestPath String project) {
        return Pages.page(() -> DataTemplates.datasets(entity, project, base(entity, project),
                ApiBodies.lines(mapper, datasets.datasetList(entity, project, 10_000, 0), DatasetReadRes.class)));
    }

    private List<ObjSchema> versions(String entity, String project, String dataset) {
        ObjQueryReq query = new ObjQueryReq().projectId(entity + "/" + project)
                .filter(new ObjectVersionFilter().objectIds(List.of(dataset)).baseObjectClasses(List.of("Dataset")));
        List<ObjSchema> found = new ArrayList<>(
                ApiBodies.json(mapper, objects.objsQuery(query), ObjQueryRes.class).getObjs());
        found.sort(Comparator.comparing(ObjSchema::getVersionIndex).reversed());
        return found;
    }

    @GET
    @Path("/datasets/{dataset}")
    public Response dataset(@RestPath String entity, @RestPath String project, @RestPath String dataset) {
        return Pages.page(() -> datasetPage(entity, project, dataset));
    }

    private TemplateInstance datasetPage(String entity, String project, String dataset) {
        return DataTemplates.dataset(entity, project, base(entity, project), dataset,
                versions(entity, project, dataset), roles.projectWriter(entity));
    }

    @GET
    @Path("/datasets/{dataset}/versions/{version}")
    public Response rows(@RestPath String entity, @RestPath String project, @RestPath String dataset,
            @RestPath String version, @RestQuery Integer page) {
        return Pages.page(() -> rowsPage(entity, project, dataset, version, page == null ? 1 : page));
    }

    private TemplateInstance rowsPage(String entity, String project, String dataset, String version, int page) {
        String projectId = entity + "/" + project;
        ObjSchema object = ApiBodies
                .json(mapper, objects.objRead(new ObjReadReq().projectId(projectId).objectId(dataset).digest(version)),
                        ObjReadRes.class)
                .getObj();
        String rowsRef = object.getVal().path("rows").asText("");
        String table = rowsRef.substring(rowsRef.lastIndexOf('/') + 1);
        int total = ApiBodies
                .json(mapper, tables.tableQueryStats(new TableQueryStatsReq().projectId(projectId).digest(table)),
                        TableQueryStatsRes.class)
                .getCount();
        int pages = Math.max(1, (total + ROWS_PER_PAGE - 1) / ROWS_PER_PAGE);
        if (page < 1 || page > pages) {
            throw new Pages.FormException("page", "No page " + page + ": the rows fill pages 1 to " + pages);
        }
        int offset = (page - 1) * ROWS_PER_PAGE;
        List<TableRow> rows = ApiBodies.json(mapper,
                tables.tableQuery(
                        new TableQueryReq().projectId(projectId).digest(table).limit(ROWS_PER_PAGE).offset(offset)),
                TableQueryRes.class).getRows();
        Set<String> columns = new LinkedHashSet<>();
        for (TableRow row : rows) {
            for (Iterator<String> names = row.getVal().fieldNames(); names.hasNext();) {
                columns.add(names.next());
            }
        }
        List<DataTemplates.RowView> views = new ArrayList<>();
        for (TableRow row : rows) {
            List<DataTemplates.Cell> cells = new ArrayList<>();
            for (String column : columns) {
                cells.add(cell(row.getVal().get(column)));
            }
            views.add(new DataTemplates.RowView(row.getOriginalIndex(), cells));
        }
        DataTemplates.RowsPage shown = new DataTemplates.RowsPage(List.copyOf(columns), views, page, pages, total,
                rows.isEmpty() ? 0 : offset + 1, offset + rows.size());
        return DataTemplates.datasetRows(entity, project, base(entity, project), dataset, object, rowsRef, shown,
                roles.projectWriter(entity));
    }

    @POST
    @Path("/datasets/{dataset}/versions/{version}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response delete(@RestPath String entity, @RestPath String project, @RestPath String dataset,
            @RestPath String version) {
        return Pages.act(console, () -> datasets.datasetDelete(entity, project, dataset, List.of(version)),
                base(entity, project) + "/datasets/" + Pages.path(dataset),
                () -> datasetPage(entity, project, dataset));
    }
}

package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunFilter;
import dev.fulcrum.runs.RunSearch;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;
import dev.fulcrum.wandb.WandbNodes.RunNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The public API's reads of many runs and of history by steps: {@code wandb.Api().runs(path, filters, order)}
 * ({@code project { runCount(filters) runs(filters, after, first, order) }}) and {@code run.scan_history()}, which the
 * SDK's {@code wandb-core} reads as {@code parquetHistory} (no exported files: every row is live data), then
 * {@code history(minStep, maxStep)} or {@code sampledHistory} with a step range, page by page.
 */
@ApplicationScoped
class WandbRunLists {

    /** The most rows of one step range (the SDK asks a page of 1,000 by default). */
    static final int MAX_RANGE_ROWS = 100_000;

    @Inject
    RunSearch search;

    @Inject
    RunService runs;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Project", type -> type.dataFetcher("runs", this::runs)
                .dataFetcher("runCount", this::runCount).dataFetcher("readOnly", env -> {
                    ProjectNode project = env.getSource();
                    return project.ref() == null || !project.ref().writable();
                })).type("Run", type -> type.dataFetcher("parquetHistory", this::parquetHistory));
    }

    private long runCount(DataFetchingEnvironment env) {
        ProjectNode project = env.getSource();
        RunFilter filter = WandbRunFilters.parse(env.getArgument("filters"));
        return project.ref() == null ? 0 : search.count(project.entityName(), project.name(), filter);
    }

    private Map<String, Object> runs(DataFetchingEnvironment env) {
        ProjectNode project = env.getSource();
        RunFilter filter = WandbRunFilters.parse(env.getArgument("filters"));
        RunFilter.Order order = WandbRunFilters.order(env.getArgument("order"));
        int size = WandbPages.size(env.getArgument("first"), 50);
        int offset = WandbPages.offset(env.getArgument("after"));
        List<Map<String, Object>> edges = new ArrayList<>();
        if (project.ref() == null) {
            return WandbPages.connection(edges, false, null);
        }
        RunService.Page<RunService.RunView> page = search.search(project.entityName(), project.name(), filter, order,
                size, offset);
        for (int i = 0; i < page.items().size(); i++) {
            edges.add(Map.of("node", new RunNode(page.items().get(i)), "cursor", WandbPages.cursor(offset + i)));
        }
        return WandbPages.connection(edges, page.nextOffset() != null, null);
    }

    /** No exported history files; the live data is the run's rows reduced to the live keys asked. */
    private Map<String, Object> parquetHistory(DataFetchingEnvironment env) {
        RunNode node = env.getSource();
        List<String> keys = env.getArgument("liveKeys");
        List<ObjectNode> live = search.historyBetween(node.run.entity(), node.run.project(), node.run.name(),
                Long.MIN_VALUE, Long.MAX_VALUE, keys, Integer.MAX_VALUE);
        return Map.of("parquetUrls", List.of(), "liveData", live);
    }

    /** The rows of a step range, for {@code history(minStep, maxStep)} and a {@code sampledHistory} spec. */
    List<ObjectNode> between(RunNode node, Number min, Number max, List<String> keys, int samples) {
        List<ObjectNode> rows = search.historyBetween(node.run.entity(), node.run.project(), node.run.name(),
                min == null ? Long.MIN_VALUE : min.longValue(), max == null ? Long.MAX_VALUE : max.longValue(), keys,
                MAX_RANGE_ROWS + 1);
        if (rows.size() > MAX_RANGE_ROWS) {
            throw ApiException.invalid(Violation.of("A step range holds at most " + MAX_RANGE_ROWS + " rows here",
                    "too_long", "query", "maxStep"));
        }
        return WandbFetchers.sample(rows, samples);
    }
}

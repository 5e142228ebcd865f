package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.runs.RunMedia;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.runs.RunService.RunView;
import dev.fulcrum.runs.RunStops;
import dev.fulcrum.runs.RunStreams;
import dev.fulcrum.wandb.api.model.WandbFileChunk;
import dev.fulcrum.wandb.api.model.WandbFileStreamRequest;

/**
 * One request of a run's file stream, applied in one transaction through the runs services: history rows (their numbers
 * logged as the runs API logs them, so the {@code RUN_METRIC} event and its automations follow; their media values kept
 * beside them), the summary, console output, system metrics, and completion as the run's state ({@code killed} once its
 * stop was asked, see {@link RunStops}).
 */
@ApplicationScoped
class RunFileStream {

    static final String HISTORY = "wandb-history.jsonl";
    static final String SUMMARY = "wandb-summary.json";
    static final String OUTPUT = "output.log";
    static final String EVENTS = "wandb-events.jsonl";

    @Inject
    RunService runs;

    @Inject
    RunMedia runMedia;

    @Inject
    RunStreams streams;

    @Inject
    RunStops stops;

    /** Applies the request; answers whether a stop of the run was asked (the SDK then stops its process). */
    @Transactional
    boolean apply(String entity, String project, String run, WandbFileStreamRequest req) {
        Map<String, WandbFileChunk> files = req.getFiles() == null ? Map.of() : req.getFiles();
        RunView current = runs.get(entity, project, run);
        WandbFileChunk history = files.get(HISTORY);
        if (history != null && history.getContent() != null) {
            // lines below the stored count are a retried request's, already stored
            int skip = (int) Math.max(0,
                    Math.min(history.getContent().size(), current.historyRows() - history.getOffset()));
            List<ObjectNode> rows = new ArrayList<>();
            List<ObjectNode> media = new ArrayList<>();
            for (String line : history.getContent().subList(skip, history.getContent().size())) {
                ObjectNode row = SdkJson.object(line, HISTORY);
                rows.add(SdkJson.numbers(row));
                media.add(SdkJson.media(row));
            }
            for (int from = 0; from < rows.size(); from += RunService.MAX_BATCH_ROWS) {
                int to = Math.min(rows.size(), from + RunService.MAX_BATCH_ROWS);
                runs.log(entity, project, run, rows.subList(from, to));
                runMedia.keep(entity, project, run, media.subList(from, to));
            }
        }
        WandbFileChunk summary = files.get(SUMMARY);
        if (summary != null && summary.getContent() != null && !summary.getContent().isEmpty()) {
            String last = summary.getContent().get(summary.getContent().size() - 1);
            streams.replaceSummary(entity, project, run, SdkJson.finite(SdkJson.object(last, SUMMARY)));
        }
        WandbFileChunk output = files.get(OUTPUT);
        if (output != null && output.getContent() != null && !output.getContent().isEmpty()) {
            streams.writeOutput(entity, project, run, output.getOffset(), output.getContent());
        }
        WandbFileChunk events = files.get(EVENTS);
        if (events != null && events.getContent() != null && !events.getContent().isEmpty()) {
            List<ObjectNode> lines = new ArrayList<>();
            for (String line : events.getContent()) {
                lines.add(SdkJson.finite(SdkJson.object(line, EVENTS)));
            }
            streams.appendSystemMetrics(entity, project, run, events.getOffset(), lines);
        }
        if (Boolean.TRUE.equals(req.getComplete())) {
            int exit = req.getExitcode() == null ? 0 : req.getExitcode();
            runs.update(entity, project, run, stops.endState(current.id(), exit), null);
        }
        return stops.asked(current.id());
    }
}

package dev.fulcrum.runs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The values of history rows that are not numbers (column {@code run_history.media}): the W&B SDK's media objects
 * ({@code {"_type": "image-file", "path": "media/images/...", ...}}, tables, histograms, HTML, audio), kept beside the
 * row's numbers so that metric reads, the summary and {@code RUN_METRIC} events stay those of numbers.
 */
@ApplicationScoped
public class RunMedia {

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    RunFiles files;

    /** A history row's media values and its step. */
    public record MediaRow(long step, ObjectNode values) {
    }

    /**
     * Keeps the media values of the rows just logged by {@link RunService#log} in the same transaction (which holds the
     * run's lock, so they are the run's last {@code media.size()} rows); a null entry is a row without media.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void keep(String entity, String project, String run, List<ObjectNode> media) {
        if (media.stream().allMatch(values -> values == null || values.isEmpty())) {
            return;
        }
        long runId = files.run(entity, project, run, Role.MEMBER).id();
        String[] texts = media.stream()
                .map(values -> values == null || values.isEmpty() ? null : storedJson.write(values))
                .toArray(String[]::new);
        RunHistoryStatements.keepMedia(em, runId, texts);
    }

    /** The run's rows that have media values, in logged order: at most {@code limit} from {@code offset}. */
    @Transactional
    public List<MediaRow> rows(RunFiles.RunRef run, int limit, int offset) {
        return RunHistoryStatements.mediaRows(em, run.id(), limit, offset,
                (step, media) -> new MediaRow(step, storedJson.readObject(media)));
    }

    /** The media values of the run's rows by step (a step logged twice: the later row's). */
    @Transactional
    public Map<Long, ObjectNode> byStep(String entity, String project, String run) {
        long runId = files.run(entity, project, run, Role.VIEWER).id();
        Map<Long, ObjectNode> media = new LinkedHashMap<>();
        RunHistoryStatements.media(em, runId, (step, values) -> media.put(step, storedJson.readObject(values)));
        return media;
    }
}

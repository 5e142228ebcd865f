package dev.fulcrum.training;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Page;
import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * Trajectory groups logged through {@code /log}: their rewards and metrics become a row of the model's run metrics, and
 * the groups are kept, to be read back in the order they were logged.
 */
@ApplicationScoped
public class TrainingLogs {

    private static final int SPLIT_MAX = 64;

    @Inject
    Access access;

    @Inject
    ObjectMapper json;

    @Inject
    StoredJson storedJson;

    @Inject
    RunService runs;

    @Inject
    TrainingModels models;

    @Inject
    Checkpoints checkpoints;

    @Inject
    Trajectories trajectories;

    public record LogView(long id, String modelId, String split, long step, ArrayNode groups,
            OffsetDateTime createdAt) {
    }

    @Transactional
    public void log(String modelId, String bodyModelId, List<ObjectNode> groups, String split) {
        if (bodyModelId != null && !bodyModelId.equals(modelId)) {
            throw ApiException
                    .invalid(Violation.of("Must equal the model id of the path", "value_error", "body", "model_id"));
        }
        if (!Names.isName(split, SPLIT_MAX)) {
            throw ApiException.invalid(Violation.of("Must be 1 to 64 letters, digits, '_', '.' or '-'",
                    split == null ? "missing" : "value_error", "body", "split"));
        }
        List<Trajectories.Group> parsed = trajectories.parse(groups, false);
        ModelView model = models.model(modelId, Role.MEMBER);
        Integer latest = checkpoints.latestStep(modelId);
        int step = latest == null ? 0 : latest;
        ObjectNode row = JsonNodeFactory.instance.objectNode();
        row.put("_step", step);
        Trajectories.Summary summary = Trajectories.summarize(parsed);
        row.put(split + "/reward", summary.meanReward());
        row.put(split + "/reward_std_dev", summary.rewardStdDev());
        row.put(split + "/num_trajectories", summary.count());
        row.put(split + "/num_groups", parsed.size());
        summary.metrics().forEach((name, value) -> row.put(split + "/" + name, value));
        runs.log(model.entity(), model.project(), model.runName(), List.of(row));
        ArrayNode kept = JsonNodeFactory.instance.arrayNode();
        groups.forEach(kept::add);
        TrainingLog log = new TrainingLog();
        log.modelId = modelId;
        log.split = split;
        log.step = step;
        log.groups = storedJson.write(kept);
        log.createdBy = access.caller().userId();
        log.persist();
    }

    /** The model's logged groups in the order they were logged; {@code after} is the id of the last one seen. */
    @Transactional
    public CursorPage<LogView> list(String modelId, String after, Integer limit) {
        int size = QueryParams.limit(limit, CursorPage.DEFAULT_SIZE, 1, CursorPage.MAX_SIZE);
        long afterId = CursorPage.after(after, "a log id");
        models.model(modelId, Role.VIEWER);
        List<TrainingLog> rows = TrainingLog.find("modelId = ?1 and id > ?2", Sort.by("id"), modelId, afterId)
                .page(Page.ofSize(size + 1)).list();
        return CursorPage.of(rows.stream()
                .map(l -> new LogView(l.id, l.modelId, l.split, l.step, groups(l.groups), l.createdAt)).toList(), size);
    }

    private ArrayNode groups(String text) {
        try {
            return json.readValue(text, ArrayNode.class);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Stored JSON is not readable", e);
        }
    }
}

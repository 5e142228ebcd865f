package dev.fulcrum.training;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Page;
import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.TrainingModels.ModelView;

/** Creating, reading and cancelling training jobs, and reading their events. */
@ApplicationScoped
public class TrainingJobs {

    @Inject
    Access access;

    @Inject
    StoredJson storedJson;

    @Inject
    TrainingModels models;

    @Inject
    Trajectories trajectories;

    @Inject
    TrainingData trainingData;

    @Inject
    BaseModels baseModels;

    @Inject
    JobQueue queue;

    public record JobView(String id, String kind, String modelId, String status, OffsetDateTime createdAt,
            OffsetDateTime startedAt, OffsetDateTime finishedAt, String error, Integer checkpointStep) {
    }

    public record EventView(long id, String type, ObjectNode data, OffsetDateTime createdAt) {
    }

    private static final Set<String> CHECKED = Set.of("learning_rate", "batch_size", "epochs", "assistant_turns");

    @Transactional
    public String createRl(String modelId, List<ObjectNode> groups, ObjectNode experimentalConfig) {
        ObjectNode config = config(experimentalConfig, "experimental_config", false);
        trajectories.parse(groups, true);
        ModelView model = models.model(modelId, Role.MEMBER);
        ObjectNode input = JsonNodeFactory.instance.objectNode();
        ArrayNode kept = input.putArray("trajectory_groups");
        groups.forEach(kept::add);
        return insert(model, "rl", input, config);
    }

    @Transactional
    public String createSft(String modelId, String url, ObjectNode config, ObjectNode experimentalConfig) {
        ObjectNode merged = config(experimentalConfig, "experimental_config", true);
        merged.setAll(config(config, "config", true));
        ModelView model = models.model(modelId, Role.MEMBER);
        ObjectNode input = JsonNodeFactory.instance.objectNode().put("training_data_url", url);
        input.set("examples", trainingData.read(url));
        return insert(model, "sft", input, merged);
    }

    private String insert(ModelView model, String kind, ObjectNode input, ObjectNode config) {
        TrainingJob job = new TrainingJob();
        job.id = TrainingModels.randomId("job_");
        job.modelId = model.id();
        job.kind = kind;
        job.executor = baseModels.builtin(model.baseModel()) ? "cpu" : "gpu";
        job.input = storedJson.write(input);
        job.config = storedJson.write(config);
        job.createdBy = access.caller().userId();
        job.persist();
        return job.id;
    }

    /**
     * The settings, checked where an executor uses them: learning_rate (a number, or a schedule list of numbers with
     * one value per gradient step, as ART allows), batch_size, epochs, assistant_turns. Other keys (ART's loss_fn,
     * epsilon, ...) are kept as given, for workers that implement them.
     */
    static ObjectNode config(ObjectNode given, String field, boolean sft) {
        ObjectNode config = JsonNodeFactory.instance.objectNode();
        if (given == null) {
            return config;
        }
        given.fields().forEachRemaining(entry -> {
            if (!CHECKED.contains(entry.getKey()) && !entry.getValue().isNull()) {
                config.set(entry.getKey(), entry.getValue());
            }
        });
        List<Violation> problems = new ArrayList<>();
        JsonNode rate = given.get("learning_rate");
        if (rate != null && !rate.isNull()) {
            // a schedule may hold 0 (ART's linear and cosine schedules decay to 0 at their last step), not only 0
            boolean valid = true;
            boolean positive = false;
            for (JsonNode value : rate.isArray() ? rate : List.of(rate)) {
                valid &= value.isNumber() && value.doubleValue() >= 0 && Double.isFinite(value.doubleValue());
                positive |= value.isNumber() && value.doubleValue() > 0;
            }
            if (!valid || !positive) {
                problems.add(Violation.of(
                        "Must be a number greater than 0 or a list of numbers of at least 0 of which one is greater",
                        "greater_than", "body", field, "learning_rate"));
            } else {
                config.set("learning_rate", rate);
            }
        }
        JsonNode batch = given.get("batch_size");
        if (batch != null && !batch.isNull()) {
            if (!batch.canConvertToInt() || !batch.isIntegralNumber() || batch.intValue() < 1
                    || batch.intValue() > 4096) {
                problems.add(
                        Violation.of("Must be an integer from 1 to 4096", "int_type", "body", field, "batch_size"));
            } else {
                config.put("batch_size", batch.intValue());
            }
        }
        JsonNode epochs = given.get("epochs");
        if (epochs != null && !epochs.isNull()) {
            if (!epochs.isIntegralNumber() || epochs.intValue() < 1 || epochs.intValue() > 100) {
                problems.add(Violation.of("Must be an integer from 1 to 100", "int_type", "body", field, "epochs"));
            } else {
                config.put("epochs", epochs.intValue());
            }
        }
        JsonNode turns = given.get("assistant_turns");
        if (sft && turns != null && !turns.isNull()) {
            if (!turns.isTextual() || !(turns.asText().equals("all") || turns.asText().equals("last"))) {
                problems.add(Violation.of("Must be all or last", "enum", "body", field, "assistant_turns"));
            } else {
                config.put("assistant_turns", turns.asText());
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        return config;
    }

    /** The job, if the caller has {@code role} on its model's project. */
    @Transactional
    public JobView get(String id, Role role) {
        JobView job = TrainingJob.find("id", id).project(JobView.class).firstResultOptional()
                .orElseThrow(() -> ApiException.notFound("Training job " + id + " not found"));
        models.model(job.modelId(), role);
        return job;
    }

    @Transactional
    public JobView cancel(String id) {
        JobView job = get(id, Role.MEMBER);
        switch (job.status()) {
            case "queued" -> queue.cancelQueued(id);
            case "running" -> TrainingJob.update("cancelRequested = true where id = ?1", id);
            default -> throw ApiException.conflict("Training job " + id + " is " + job.status());
        }
        return get(id, Role.MEMBER);
    }

    /** The model's jobs, newest first (queue order), for readers of its project; {@code after} is a job id. */
    @Transactional
    public CursorPage<JobView> ofModel(String modelId, String after, Integer limit) {
        int size = QueryParams.limit(limit, CursorPage.DEFAULT_SIZE, 1, CursorPage.MAX_SIZE);
        models.model(modelId, Role.VIEWER);
        long before = Long.MAX_VALUE;
        if (after != null) {
            before = TrainingJob.<TrainingJob> find("id = ?1 and modelId = ?2", after, modelId).firstResultOptional()
                    .map(job -> job.seq).orElseThrow(() -> ApiException.invalid(
                            Violation.of("Must be the id of a job of this model", "value_error", "query", "after")));
        }
        List<JobView> rows = TrainingJob.find("modelId = ?1 and seq < ?2", Sort.descending("seq"), modelId, before)
                .project(JobView.class).page(Page.ofSize(size + 1)).list();
        return CursorPage.of(rows, size);
    }

    @Transactional
    public CursorPage<EventView> events(String id, String after, Integer limit) {
        int size = QueryParams.limit(limit, CursorPage.DEFAULT_SIZE, 1, CursorPage.MAX_SIZE);
        long afterId = CursorPage.after(after, "an event id");
        get(id, Role.VIEWER);
        List<TrainingJobEvent> rows = TrainingJobEvent.find("jobId = ?1 and id > ?2", Sort.by("id"), id, afterId)
                .page(Page.ofSize(size + 1)).list();
        return CursorPage.of(rows.stream()
                .map(e -> new EventView(e.id, e.type, storedJson.readObject(e.data), e.createdAt)).toList(), size);
    }
}

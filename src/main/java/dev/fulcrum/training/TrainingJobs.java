package dev.fulcrum.training;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.QueryParams;
import dev.fulcrum.platform.StoredJson;
import dev.fulcrum.training.TrainingModels.ModelView;

/** Creating, reading and cancelling training jobs, and reading their events. */
@ApplicationScoped
public class TrainingJobs {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    TrainingModels models;

    @Inject
    Trajectories trajectories;

    @Inject
    TrainingData trainingData;

    @Inject
    TrainingSettings settings;

    @Inject
    BaseModels baseModels;

    @Inject
    JobQueue queue;

    public record JobView(String id, String kind, String modelId, String status, OffsetDateTime createdAt,
            OffsetDateTime startedAt, OffsetDateTime finishedAt, String error, Integer checkpointStep) {
    }

    public record EventView(long id, String type, ObjectNode data, OffsetDateTime createdAt) {
    }

    public record Page<T>(List<T> items, boolean hasMore) {
    }

    @Transactional
    public String createRl(String modelId, List<ObjectNode> groups, ObjectNode experimentalConfig) {
        requireModelId(modelId);
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
        requireModelId(modelId);
        ObjectNode merged = config(experimentalConfig, "experimental_config", true);
        merged.setAll(config(config, "config", true));
        ModelView model = models.model(modelId, Role.MEMBER);
        ObjectNode input = JsonNodeFactory.instance.objectNode().put("training_data_url", url);
        input.set("examples", trainingData.read(url));
        return insert(model, "sft", input, merged);
    }

    private static void requireModelId(String modelId) {
        if (modelId == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "model_id"));
        }
    }

    private String insert(ModelView model, String kind, ObjectNode input, ObjectNode config) {
        String id = TrainingModels.randomId("job_");
        String executor = baseModels.builtin(model.baseModel()) ? "cpu" : "gpu";
        em.createNativeQuery("""
                insert into training_jobs (id, model_id, kind, executor, input, config, created_by)
                values (?1, ?2, ?3, ?4, ?5, cast(?6 as jsonb), ?7)""").setParameter(1, id).setParameter(2, model.id())
                .setParameter(3, kind).setParameter(4, executor).setParameter(5, storedJson.write(input))
                .setParameter(6, storedJson.write(config)).setParameter(7, access.caller().userId()).executeUpdate();
        return id;
    }

    /** The settings the executors use, checked: learning_rate, batch_size, epochs, assistant_turns. */
    static ObjectNode config(ObjectNode given, String field, boolean sft) {
        ObjectNode config = JsonNodeFactory.instance.objectNode();
        if (given == null) {
            return config;
        }
        List<Violation> problems = new ArrayList<>();
        JsonNode rate = given.get("learning_rate");
        if (rate != null && !rate.isNull()) {
            if (rate.isArray() && !rate.isEmpty()) {
                rate = rate.get(0); // ART allows a schedule; the first value is used
            }
            if (!rate.isNumber() || !(rate.doubleValue() > 0) || !Double.isFinite(rate.doubleValue())) {
                problems.add(Violation.of("Must be a number greater than 0", "greater_than", "body", field,
                        "learning_rate"));
            } else {
                config.put("learning_rate", rate.doubleValue());
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

    private static final String JOB_QUERY = """
            select j.id, j.kind, j.model_id, j.status, j.created_at, j.started_at, j.finished_at, j.error,
            j.checkpoint_step from training_jobs j""";

    /** The job, if the caller has {@code role} on its model's project. */
    @Transactional
    public JobView get(String id, Role role) {
        List<?> rows = em.createNativeQuery(JOB_QUERY + " where j.id = ?1").setParameter(1, id).getResultList();
        if (rows.isEmpty()) {
            throw ApiException.notFound("Training job " + id + " not found");
        }
        JobView job = jobView((Object[]) rows.get(0));
        models.model(job.modelId(), role);
        return job;
    }

    static JobView jobView(Object[] r) {
        return new JobView((String) r[0], (String) r[1], (String) r[2], (String) r[3], TrainingModels.time(r[4]),
                TrainingModels.time(r[5]), TrainingModels.time(r[6]), (String) r[7],
                r[8] == null ? null : ((Number) r[8]).intValue());
    }

    @Transactional
    public JobView cancel(String id) {
        JobView job = get(id, Role.MEMBER);
        switch (job.status()) {
            case "queued" -> queue.cancelQueued(id);
            case "running" -> em.createNativeQuery("update training_jobs set cancel_requested = true where id = ?1")
                    .setParameter(1, id).executeUpdate();
            default -> throw ApiException.conflict("Training job " + id + " is " + job.status());
        }
        return get(id, Role.MEMBER);
    }

    @Transactional
    public Page<EventView> events(String id, String after, Integer limit) {
        int size = QueryParams.limit(limit, TrainingModels.DEFAULT_PAGE, 1, TrainingModels.MAX_PAGE);
        long afterId = 0;
        if (after != null) {
            try {
                afterId = Long.parseLong(after);
            } catch (NumberFormatException e) {
                throw ApiException.invalid(Violation.of("Must be an event id", "value_error", "query", "after"));
            }
        }
        get(id, Role.VIEWER);
        List<?> rows = em.createNativeQuery("""
                select id, type, data::text, created_at from training_job_events
                where job_id = ?1 and id > ?2 order by id limit ?3""").setParameter(1, id).setParameter(2, afterId)
                .setParameter(3, size + 1).getResultList();
        List<EventView> events = new ArrayList<>();
        for (Object row : rows) {
            Object[] r = (Object[]) row;
            events.add(new EventView(((Number) r[0]).longValue(), (String) r[1], storedJson.readObject((String) r[2]),
                    TrainingModels.time(r[3])));
        }
        boolean more = events.size() > size;
        return new Page<>(more ? events.subList(0, size) : events, more);
    }
}

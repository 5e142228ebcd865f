package dev.fulcrum.training;

import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TypedQuery;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactCollections;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.runs.RunService;

/**
 * Models: a model is a row pointing at its project, its run and its {@code lora} artifact collection (named after the
 * model), whose versions are the model's {@link Checkpoints}.
 */
@ApplicationScoped
public class TrainingModels {

    private static final char[] ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A model with the names of its entity and project. */
    private static final String MODEL_VIEW = """
            select new dev.fulcrum.training.TrainingModels$ModelView(m.id, m.projectId, e.name, p.name, m.name,
                m.baseModel, m.runName, m.createdAt)
            from TrainingModel m join Project p on p.id = m.projectId join PlatformEntity e on e.id = p.entityId""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    ArtifactCollections artifacts;

    @Inject
    RunService runs;

    @Inject
    BaseModels baseModels;

    @Inject
    CheckpointFiles checkpointFiles;

    @Inject
    Checkpoints checkpoints;

    public record ModelView(String id, Long projectId, String entity, String project, String name, String baseModel,
            String runName, OffsetDateTime createdAt) {

        String artifactReference(int step) {
            return "wandb-artifact:///" + entity + "/" + project + "/" + name + ":step" + step;
        }
    }

    public record Created(ModelView model, boolean isNew) {
    }

    public record Deleted(String modelId, int deletedCheckpoints, boolean deletedRun) {
    }

    static String randomId(String prefix) {
        StringBuilder id = new StringBuilder(prefix);
        for (int i = 0; i < 24; i++) {
            id.append(ID_CHARS[RANDOM.nextInt(ID_CHARS.length)]);
        }
        return id.toString();
    }

    @Transactional
    public Created create(String entity, String project, String name, String baseModel, boolean returnExisting) {
        List<Violation> problems = new ArrayList<>();
        if (!baseModels.builtin(baseModel) && !baseModels.worker(baseModel)) {
            problems.add(Violation.of("Unknown base model " + baseModel + "; trainable base models: "
                    + String.join(", ", baseModels.all()), "value_error", "body", "base_model"));
        } else if (!baseModels.inCatalog(baseModel)) {
            problems.add(Violation.of("Base model " + baseModel
                    + " is not in the inference catalog (GET /v1/models); a server administrator adds it under"
                    + " /api/v1/admin/models", "value_error", "body", "base_model"));
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        Caller caller = access.caller();
        String owner = entity != null ? entity : caller.username();
        ProjectRef ref = access.writableProject(owner, project);
        AdvisoryLocks.lock(em, AdvisoryLocks.TRAINING_MODELS, ref.projectId() + "/" + name);
        Optional<ModelView> existing = find(ref, name);
        if (existing.isPresent()) {
            if (returnExisting) {
                return new Created(existing.get(), false);
            }
            throw ApiException.conflict("Model " + name + " exists in " + owner + "/" + project);
        }
        ObjectNode runConfig = JsonNodeFactory.instance.objectNode().put("base_model", baseModel).put("model", name);
        RunService.RunView run = runs.create(owner, project, null, name, runConfig);
        TrainingModel row = new TrainingModel();
        row.id = randomId("model_");
        row.projectId = ref.projectId();
        row.name = name;
        row.baseModel = baseModel;
        row.runId = run.id();
        row.runName = run.name();
        row.createdBy = caller.userId();
        row.persistAndFlush();
        ModelView model = find(ref, name).orElseThrow();
        checkpoints.add(model, 0, checkpointFiles.initial(baseModel), JsonNodeFactory.instance.objectNode());
        return new Created(model, true);
    }

    private Optional<ModelView> find(ProjectRef ref, String name) {
        return views("m.projectId = :project and m.name = :name", Map.of("project", ref.projectId(), "name", name))
                .getResultStream().findFirst();
    }

    private Optional<ModelView> find(String id) {
        return views("m.id = :id", Map.of("id", id)).getResultStream().findFirst();
    }

    private TypedQuery<ModelView> views(String where, Map<String, Object> params) {
        TypedQuery<ModelView> query = em.createQuery(MODEL_VIEW + " where " + where, ModelView.class);
        params.forEach(query::setParameter);
        return query;
    }

    /**
     * Adds the model's next checkpoint (after its latest) from files in the blob store, for the Tinker API's saved
     * weights; the caller needs the member role on the model's project. Answers its step.
     */
    @Transactional
    public int addCheckpoint(String modelId, List<dev.fulcrum.artifacts.VersionWrites.StoredFile> files,
            ObjectNode metrics) {
        ModelView model = model(modelId, Role.MEMBER);
        AdvisoryLocks.lock(em, AdvisoryLocks.TRAINING_MODELS, model.projectId() + "/" + model.name());
        Integer latest = checkpoints.latestStep(modelId);
        int step = latest == null ? 1 : latest + 1;
        checkpoints.addBlobs(model, step, files, metrics);
        return step;
    }

    /** The model without an access check, for executors (which then act with the job creator's rights). */
    @Transactional
    ModelView modelForExecutor(String id) {
        return find(id).orElseThrow(() -> ApiException.notFound("Model " + id + " not found"));
    }

    /** The model, if the caller has at least {@code role} on its project; 404 for unknown ids. */
    @Transactional
    public ModelView model(String id, Role role) {
        ModelView model = modelForExecutor(id);
        access.project(model.entity(), model.project(), role);
        return model;
    }

    /** The model of a project by name (for checkpoint references), if the caller may read the project. */
    @Transactional
    public ModelView byName(String entity, String project, String name) {
        ProjectRef ref = access.readableProject(entity, project);
        return find(ref, name).orElseThrow(
                () -> ApiException.notFound("Model " + entity + "/" + project + "/" + name + " not found"));
    }

    /** The models the caller may read, newest first, of one entity or project when given. */
    @Transactional
    public CursorPage<ModelView> list(String after, Integer limit, String entity, String project) {
        int size = QueryParams.limit(limit, CursorPage.DEFAULT_SIZE, 1, CursorPage.MAX_SIZE);
        Caller caller = access.caller();
        List<String> where = new ArrayList<>();
        Map<String, Object> params = new HashMap<>();
        if (!caller.admin()) {
            where.add("exists (select 1 from EntityMember member where member.entityId = p.entityId"
                    + " and member.userId = :user)");
            params.put("user", caller.userId());
        }
        if (entity != null) {
            where.add("e.name = :entity");
            params.put("entity", entity);
        }
        if (project != null) {
            where.add("p.name = :projectName");
            params.put("projectName", project);
        }
        if (after != null) {
            TrainingModel cursor = TrainingModel.findById(after);
            if (cursor == null) {
                throw ApiException.invalid(Violation.of("Unknown model id", "value_error", "query", "after"));
            }
            where.add("(m.createdAt < :afterTime or (m.createdAt = :afterTime and m.id < :afterId))");
            params.put("afterTime", cursor.createdAt);
            params.put("afterId", after);
        }
        String condition = where.isEmpty() ? "1 = 1" : String.join(" and ", where);
        List<ModelView> rows = views(condition + " order by m.createdAt desc, m.id desc", params)
                .setMaxResults(size + 1).getResultList();
        return CursorPage.of(rows, size);
    }

    @Transactional
    public Deleted delete(String id) {
        ModelView model = model(id, Role.MEMBER);
        lockModel(id);
        if (TrainingJob.count("modelId = ?1 and status = 'running'", id) > 0) {
            throw ApiException.conflict("A training job of model " + id + " is running; cancel it first");
        }
        long deletedCheckpoints = Checkpoint.count("modelId", id);
        TrainingModel.delete("id", id); // the database deletes its checkpoints, jobs and logs with it
        try {
            artifacts.deleteCollection(model.entity(), model.project(), model.name());
        } catch (ApiException e) {
            if (e.kind() != ApiException.Kind.NOT_FOUND) {
                throw e;
            }
        }
        boolean deletedRun = runs.delete(model.entity(), model.project(), model.runName());
        return new Deleted(id, (int) deletedCheckpoints, deletedRun);
    }

    /** Serializes changes of one model's checkpoints and jobs. */
    void lockModel(String id) {
        AdvisoryLocks.lock(em, AdvisoryLocks.TRAINING_MODELS, id);
    }

    static Map<String, Double> numbers(JsonNode object) {
        Map<String, Double> values = new LinkedHashMap<>();
        if (object != null && object.isObject()) {
            object.fields().forEachRemaining(e -> {
                if (e.getValue().isNumber()) {
                    values.put(e.getKey(), e.getValue().doubleValue());
                }
            });
        }
        return values;
    }
}

package dev.fulcrum.training;

import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactService;
import dev.fulcrum.artifacts.ArtifactService.VersionView;
import dev.fulcrum.platform.AdvisoryLocks;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.QueryParams;
import dev.fulcrum.platform.StoredJson;
import dev.fulcrum.runs.RunService;

/**
 * Models and their checkpoints. A model is a row pointing at its project, its run and its {@code lora} artifact
 * collection (named after the model); each checkpoint is an artifact version of that collection with aliases
 * {@code step{N}} and {@code latest}, plus a row holding its step and metrics.
 */
@ApplicationScoped
public class TrainingModels {

    static final String ARTIFACT_TYPE = "lora";
    static final int DEFAULT_PAGE = 20;
    static final int MAX_PAGE = 100;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final Pattern SPLIT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    private static final char[] ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    ArtifactService artifacts;

    @Inject
    RunService runs;

    @Inject
    TrainingSettings settings;

    @Inject
    BaseModels baseModels;

    @Inject
    CheckpointFiles checkpointFiles;

    @Inject
    Trajectories trajectories;

    public record ModelView(String id, long projectId, String entity, String project, String name, String baseModel,
            String runName, OffsetDateTime createdAt) {

        String artifactReference(int step) {
            return "wandb-artifact:///" + entity + "/" + project + "/" + name + ":step" + step;
        }
    }

    public record Created(ModelView model, boolean isNew) {
    }

    public record CheckpointView(String id, int step, ObjectNode metrics, String artifact, OffsetDateTime createdAt) {
    }

    public record Page<T>(List<T> items, boolean hasMore) {
    }

    public record Deleted(String modelId, int deletedCheckpoints, boolean deletedRun) {
    }

    public record CheckpointsDeleted(int deletedCount, List<Integer> notFoundSteps) {
    }

    /** A timestamptz of a native query (Hibernate answers Instant). */
    static OffsetDateTime time(Object value) {
        return value instanceof java.time.Instant instant ? instant.atOffset(java.time.ZoneOffset.UTC)
                : (OffsetDateTime) value;
    }

    static String randomId(String prefix) {
        StringBuilder id = new StringBuilder(prefix);
        for (int i = 0; i < 24; i++) {
            id.append(ID_CHARS[RANDOM.nextInt(ID_CHARS.length)]);
        }
        return id.toString();
    }

    // ---------------------------------------------------------------- models

    @Transactional
    public Created create(String entity, String project, String name, String baseModel, boolean returnExisting) {
        List<Violation> problems = new ArrayList<>();
        if (project == null || !Names.isProject(project)) {
            problems.add(Violation.of("Must be a project name", project == null ? "missing" : "value_error", "body",
                    "project"));
        }
        if (name == null || !NAME.matcher(name).matches()) {
            problems.add(
                    Violation.of("Must be 1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit",
                            name == null ? "missing" : "value_error", "body", "name"));
        }
        if (baseModel == null) {
            problems.add(Violation.of("Field required", "missing", "body", "base_model"));
        } else if (!baseModels.builtin(baseModel) && !baseModels.worker(baseModel)) {
            problems.add(Violation.of("Unknown base model " + baseModel + "; trainable base models: "
                    + String.join(", ", baseModels.all()), "value_error", "body", "base_model"));
        } else if (!baseModels.inCatalog(baseModel)) {
            problems.add(Violation.of("Base model " + baseModel
                    + " is not in the inference catalog (GET /v1/models); a server administrator adds it under"
                    + " /api/v1/admin/models", "value_error", "body", "base_model"));
        }
        if (entity != null && !Names.isEntity(entity)) {
            problems.add(Violation.of("Must be an entity name", "value_error", "body", "entity"));
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        Caller caller = access.caller();
        String owner = entity != null ? entity : caller.username();
        ProjectRef ref = access.writableProject(owner, project);
        AdvisoryLocks.lock(em, AdvisoryLocks.TRAINING_MODELS, ref.projectId() + "/" + name);
        ModelView existing = find(ref, name);
        if (existing != null) {
            if (returnExisting) {
                return new Created(existing, false);
            }
            throw ApiException.conflict("Model " + name + " exists in " + owner + "/" + project);
        }
        ObjectNode runConfig = JsonNodeFactory.instance.objectNode().put("base_model", baseModel).put("model", name);
        RunService.RunView run = runs.create(owner, project, null, name, runConfig);
        String id = randomId("model_");
        em.createNativeQuery("""
                insert into training_models (id, project_id, name, base_model, run_id, run_name, created_by)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7)""").setParameter(1, id).setParameter(2, ref.projectId())
                .setParameter(3, name).setParameter(4, baseModel).setParameter(5, run.id()).setParameter(6, run.name())
                .setParameter(7, caller.userId()).executeUpdate();
        ModelView model = find(ref, name);
        addCheckpoint(model, 0, checkpointFiles.initial(baseModel), JsonNodeFactory.instance.objectNode());
        return new Created(model, true);
    }

    private static final String MODEL_QUERY = """
            select m.id, m.project_id, e.name, p.name, m.name, m.base_model, m.run_name, m.created_at
            from training_models m join projects p on p.id = m.project_id join entities e on e.id = p.entity_id""";

    private ModelView find(ProjectRef ref, String name) {
        List<?> rows = em.createNativeQuery(MODEL_QUERY + " where m.project_id = ?1 and m.name = ?2")
                .setParameter(1, ref.projectId()).setParameter(2, name).getResultList();
        return rows.isEmpty() ? null : modelView((Object[]) rows.get(0));
    }

    private static ModelView modelView(Object[] row) {
        return new ModelView((String) row[0], ((Number) row[1]).longValue(), (String) row[2], (String) row[3],
                (String) row[4], (String) row[5], (String) row[6], TrainingModels.time(row[7]));
    }

    /** The model without an access check, for executors (which then act with the job creator's rights). */
    @Transactional
    ModelView modelForExecutor(String id) {
        List<?> rows = em.createNativeQuery(MODEL_QUERY + " where m.id = ?1").setParameter(1, id).getResultList();
        if (rows.isEmpty()) {
            throw ApiException.notFound("Model " + id + " not found");
        }
        return modelView((Object[]) rows.get(0));
    }

    /** The model, if the caller has at least {@code role} on its project; 404 for unknown ids. */
    @Transactional
    public ModelView model(String id, Role role) {
        List<?> rows = em.createNativeQuery(MODEL_QUERY + " where m.id = ?1").setParameter(1, id).getResultList();
        if (rows.isEmpty()) {
            throw ApiException.notFound("Model " + id + " not found");
        }
        ModelView model = modelView((Object[]) rows.get(0));
        access.project(model.entity(), model.project(), role);
        return model;
    }

    /** The model of a project by name (for checkpoint references), if the caller may read the project. */
    @Transactional
    public ModelView byName(String entity, String project, String name) {
        ProjectRef ref = access.readableProject(entity, project);
        ModelView model = find(ref, name);
        if (model == null) {
            throw ApiException.notFound("Model " + entity + "/" + project + "/" + name + " not found");
        }
        return model;
    }

    @Transactional
    public Page<ModelView> list(String after, Integer limit, String entity, String project) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        Caller caller = access.caller();
        OffsetDateTime afterTime = null;
        if (after != null) {
            List<?> cursor = em.createNativeQuery("select created_at from training_models where id = ?1")
                    .setParameter(1, after).getResultList();
            if (cursor.isEmpty()) {
                throw ApiException.invalid(Violation.of("Unknown model id", "value_error", "query", "after"));
            }
            afterTime = TrainingModels.time(cursor.get(0));
        }
        List<?> rows = em.createNativeQuery(MODEL_QUERY + " " + """
                where (?1 or exists (select 1 from entity_members em where em.entity_id = p.entity_id
                and em.user_id = ?2))
                and (cast(?3 as text) is null or e.name = ?3) and (cast(?4 as text) is null or p.name = ?4)
                and (cast(?5 as timestamptz) is null or (m.created_at, m.id) < (cast(?5 as timestamptz), ?6))
                order by m.created_at desc, m.id desc limit ?7""").setParameter(1, caller.admin())
                .setParameter(2, caller.userId()).setParameter(3, entity).setParameter(4, project)
                .setParameter(5, afterTime).setParameter(6, after == null ? "" : after).setParameter(7, size + 1)
                .getResultList();
        List<ModelView> models = new ArrayList<>();
        for (Object row : rows) {
            models.add(modelView((Object[]) row));
        }
        boolean more = models.size() > size;
        return new Page<>(more ? models.subList(0, size) : models, more);
    }

    @Transactional
    public Deleted delete(String id) {
        ModelView model = model(id, Role.MEMBER);
        lockModel(id);
        Number running = (Number) em
                .createNativeQuery("select count(*) from training_jobs where model_id = ?1 and status = 'running'")
                .setParameter(1, id).getSingleResult();
        if (running.longValue() > 0) {
            throw ApiException.conflict("A training job of model " + id + " is running; cancel it first");
        }
        Number checkpoints = (Number) em
                .createNativeQuery("select count(*) from training_checkpoints where model_id = ?1").setParameter(1, id)
                .getSingleResult();
        em.createNativeQuery("delete from training_models where id = ?1").setParameter(1, id).executeUpdate();
        try {
            artifacts.deleteCollection(model.entity(), model.project(), model.name());
        } catch (ApiException e) {
            if (e.status() != 404) {
                throw e;
            }
        }
        boolean deletedRun = runs.delete(model.entity(), model.project(), model.runName());
        return new Deleted(id, checkpoints.intValue(), deletedRun);
    }

    /** Serializes changes of one model's checkpoints and jobs. */
    void lockModel(String id) {
        AdvisoryLocks.lock(em, AdvisoryLocks.TRAINING_MODELS, id);
    }

    // ---------------------------------------------------------------- checkpoints

    @Transactional
    public Page<CheckpointView> checkpoints(String id, String after, Integer limit, String order) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        boolean desc;
        if (order == null || order.equals("asc")) {
            desc = false;
        } else if (order.equals("desc")) {
            desc = true;
        } else {
            throw ApiException.invalid(Violation.of("Must be asc or desc", "enum", "query", "order"));
        }
        ModelView model = model(id, Role.VIEWER);
        Integer afterStep = null;
        if (after != null) {
            afterStep = checkpointStep(id, after);
        }
        String comparison = desc ? "<" : ">";
        List<?> rows = em
                .createNativeQuery("select step, metrics::text, created_at from training_checkpoints"
                        + " where model_id = ?1 and (cast(?2 as integer) is null or step " + comparison + " ?2)"
                        + " order by step " + (desc ? "desc" : "asc") + " limit ?3")
                .setParameter(1, id).setParameter(2, afterStep).setParameter(3, size + 1).getResultList();
        List<CheckpointView> all = new ArrayList<>();
        for (Object row : rows) {
            Object[] r = (Object[]) row;
            int step = ((Number) r[0]).intValue();
            all.add(new CheckpointView(checkpointId(id, step), step, storedJson.readObject((String) r[1]),
                    model.artifactReference(step), TrainingModels.time(r[2])));
        }
        boolean more = all.size() > size;
        return new Page<>(more ? all.subList(0, size) : all, more);
    }

    static String checkpointId(String modelId, int step) {
        return modelId + ":step" + step;
    }

    private static int checkpointStep(String modelId, String checkpointId) {
        String prefix = modelId + ":step";
        if (checkpointId.startsWith(prefix)) {
            try {
                return Integer.parseInt(checkpointId.substring(prefix.length()));
            } catch (NumberFormatException e) {
                // answered below
            }
        }
        throw ApiException.invalid(Violation.of("Not a checkpoint id of this model", "value_error", "query", "after"));
    }

    @Transactional
    public CheckpointsDeleted deleteCheckpoints(String id, List<Integer> steps) {
        if (steps == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "steps"));
        }
        ModelView model = model(id, Role.MEMBER);
        lockModel(id);
        Integer latest = latestStep(id);
        Number waiting = (Number) em
                .createNativeQuery(
                        "select count(*) from training_jobs where model_id = ?1 and status in ('queued', 'running')")
                .setParameter(1, id).getSingleResult();
        if (latest != null && steps.contains(latest) && waiting.longValue() > 0) {
            throw ApiException.conflict("Checkpoint step " + latest
                    + " is the latest checkpoint and a training job of the model starts from it");
        }
        int deleted = 0;
        List<Integer> notFound = new ArrayList<>();
        for (Integer step : steps.stream().distinct().toList()) {
            List<?> version = step == null ? List.of()
                    : em.createNativeQuery("select artifact_version_id from training_checkpoints"
                            + " where model_id = ?1 and step = ?2").setParameter(1, id).setParameter(2, step)
                            .getResultList();
            if (version.isEmpty()) {
                notFound.add(step);
                continue;
            }
            artifacts.deleteVersion(model.entity(), model.project(), model.name(), "step" + step);
            em.createNativeQuery("delete from training_checkpoints where model_id = ?1 and step = ?2")
                    .setParameter(1, id).setParameter(2, step).executeUpdate();
            deleted++;
        }
        return new CheckpointsDeleted(deleted, notFound);
    }

    /** A checkpoint's step and artifact version id; {@code step} null for the latest; null when there is none. */
    @Transactional
    public long[] checkpointVersion(String modelId, Integer step) {
        List<?> rows = em.createNativeQuery("select step, artifact_version_id from training_checkpoints"
                + " where model_id = ?1 and (cast(?2 as integer) is null or step = ?2) order by step desc limit 1")
                .setParameter(1, modelId).setParameter(2, step).getResultList();
        if (rows.isEmpty()) {
            return null;
        }
        Object[] r = (Object[]) rows.get(0);
        return new long[] { ((Number) r[0]).longValue(), ((Number) r[1]).longValue() };
    }

    /** The model's latest checkpoint step, null when it has none. */
    Integer latestStep(String id) {
        Object step = em.createNativeQuery("select max(step) from training_checkpoints where model_id = ?1")
                .setParameter(1, id).getSingleResult();
        return step == null ? null : ((Number) step).intValue();
    }

    /**
     * Creates checkpoint {@code step} from the files: a new artifact version of the model's collection (the collection
     * is created with the first one) with aliases {@code step{N}} and {@code latest}, through the artifact service, so
     * the alias events reach automations. Joins the caller's transaction.
     */
    @Transactional
    public VersionView addCheckpoint(ModelView model, int step, Map<String, byte[]> files, ObjectNode metrics) {
        List<TempFile> uploads = new ArrayList<>();
        try {
            files.forEach((path, content) -> uploads.add(TempFile.of(path, content)));
            return addCheckpointFiles(model, step, uploads, metrics);
        } finally {
            uploads.forEach(TempFile::close);
        }
    }

    /** As {@link #addCheckpoint(ModelView, int, Map, ObjectNode)}, from files on disk (the caller deletes them). */
    @Transactional
    public VersionView addCheckpointFiles(ModelView model, int step, List<TempFile> files, ObjectNode metrics) {
        ObjectNode metadata = JsonNodeFactory.instance.objectNode().put("model_id", model.id())
                .put("base_model", model.baseModel()).put("step", step);
        metadata.set("metrics", metrics);
        VersionView version = artifacts.createVersion(model.entity(), model.project(), model.name(),
                new ArrayList<>(files), storedJson.write(metadata), "Checkpoint step " + step, ARTIFACT_TYPE).version();
        version = artifacts.addAlias(model.entity(), model.project(), model.name(), version.version(), "step" + step);
        em.createNativeQuery("""
                insert into training_checkpoints (model_id, step, artifact_version_id, metrics)
                values (?1, ?2, ?3, cast(?4 as jsonb))""").setParameter(1, model.id()).setParameter(2, step)
                .setParameter(3, version.id()).setParameter(4, storedJson.write(metrics)).executeUpdate();
        return version;
    }

    // ---------------------------------------------------------------- log

    @Transactional
    public void log(String id, String bodyModelId, List<ObjectNode> groups, String split) {
        if (bodyModelId != null && !bodyModelId.equals(id)) {
            throw ApiException
                    .invalid(Violation.of("Must equal the model id of the path", "value_error", "body", "model_id"));
        }
        if (split == null || !SPLIT.matcher(split).matches()) {
            throw ApiException.invalid(Violation.of("Must be 1 to 64 letters, digits, '_', '.' or '-'",
                    split == null ? "missing" : "value_error", "body", "split"));
        }
        List<Trajectories.Group> parsed = trajectories.parse(groups, false);
        ModelView model = model(id, Role.MEMBER);
        Integer step = latestStep(id);
        ObjectNode row = JsonNodeFactory.instance.objectNode();
        row.put("_step", step == null ? 0 : step);
        Trajectories.Summary summary = Trajectories.summarize(parsed);
        row.put(split + "/reward", summary.meanReward());
        row.put(split + "/reward_std_dev", summary.rewardStdDev());
        row.put(split + "/num_trajectories", summary.count());
        row.put(split + "/num_groups", parsed.size());
        summary.metrics().forEach((name, value) -> row.put(split + "/" + name, value));
        runs.log(model.entity(), model.project(), model.runName(), List.of(row));
        ArrayNode kept = JsonNodeFactory.instance.arrayNode();
        groups.forEach(kept::add);
        em.createNativeQuery("""
                insert into training_logs (model_id, split, step, groups, created_by)
                values (?1, ?2, ?3, ?4, ?5)""").setParameter(1, id).setParameter(2, split)
                .setParameter(3, step == null ? 0 : step).setParameter(4, storedJson.write(kept))
                .setParameter(5, access.caller().userId()).executeUpdate();
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

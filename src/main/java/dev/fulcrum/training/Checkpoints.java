package dev.fulcrum.training;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Page;
import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactLabels;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.BlobChecksums;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.artifacts.VersionWrites;
import dev.fulcrum.artifacts.VersionWrites.StoredFile;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * The checkpoints of models. Each is an artifact version of the model's collection with aliases {@code step{N}} and
 * {@code latest}, plus a {@link Checkpoint} row holding its step and metrics.
 */
@ApplicationScoped
public class Checkpoints {

    static final String ARTIFACT_TYPE = "lora";

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    VersionWrites versionWrites;

    @Inject
    ArtifactLabels labels;

    @Inject
    BlobChecksums checksums;

    @Inject
    TrainingModels models;

    @Inject
    ArtifactVersions versions;

    public record CheckpointView(String id, int step, ObjectNode metrics, String artifact, OffsetDateTime createdAt) {
    }

    /** A stored checkpoint: its step and the artifact version holding its files. */
    public record Stored(int step, long artifactVersionId) {
    }

    public record Deleted(int deletedCount, List<Integer> notFoundSteps) {
    }

    static String checkpointId(String modelId, int step) {
        return modelId + ":step" + step;
    }

    @Transactional
    public CursorPage<CheckpointView> list(String modelId, String after, Integer limit, String order) {
        int size = QueryParams.limit(limit, CursorPage.DEFAULT_SIZE, 1, CursorPage.MAX_SIZE);
        boolean desc;
        if (order == null || order.equals("asc")) {
            desc = false;
        } else if (order.equals("desc")) {
            desc = true;
        } else {
            throw ApiException.invalid(Violation.of("Must be asc or desc", "enum", "query", "order"));
        }
        ModelView model = models.model(modelId, Role.VIEWER);
        Sort sort = desc ? Sort.descending("step") : Sort.ascending("step");
        List<Checkpoint> rows = (after == null ? Checkpoint.find("modelId", sort, modelId)
                : Checkpoint.find("modelId = ?1 and step " + (desc ? "<" : ">") + " ?2", sort, modelId,
                        step(modelId, after))).page(Page.ofSize(size + 1)).list();
        return CursorPage
                .of(rows.stream()
                        .map(c -> new CheckpointView(checkpointId(modelId, c.step), c.step,
                                storedJson.readObject(c.metrics), model.artifactReference(c.step), c.createdAt))
                        .toList(), size);
    }

    private static int step(String modelId, String checkpointId) {
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
    public Deleted delete(String modelId, List<Integer> steps) {
        ModelView model = models.model(modelId, Role.MEMBER);
        models.lockModel(modelId);
        Integer latest = latestStep(modelId);
        long waiting = TrainingJob.count("modelId = ?1 and status in ('queued', 'running')", modelId);
        if (latest != null && steps.contains(latest) && waiting > 0) {
            throw ApiException.conflict("Checkpoint step " + latest
                    + " is the latest checkpoint and a training job of the model starts from it");
        }
        int deleted = 0;
        List<Integer> notFound = new ArrayList<>();
        for (Integer step : steps.stream().distinct().toList()) {
            if (step == null || Checkpoint.count("modelId = ?1 and step = ?2", modelId, step) == 0) {
                notFound.add(step);
                continue;
            }
            versionWrites.deleteVersion(model.entity(), model.project(), model.name(), "step" + step);
            Checkpoint.delete("modelId = ?1 and step = ?2", modelId, step);
            deleted++;
        }
        return new Deleted(deleted, notFound);
    }

    /**
     * Deletes checkpoint {@code step} with no caller, for a retention rule (Tinker's expired saved weights): its
     * artifact version and its row. A step already gone is no error.
     */
    @Transactional
    public void expire(String modelId, int step) {
        Checkpoint checkpoint = Checkpoint.<Checkpoint> find("modelId = ?1 and step = ?2", modelId, step).firstResult();
        if (checkpoint != null) {
            versionWrites.deleteExpired(checkpoint.artifactVersionId);
            Checkpoint.delete("modelId = ?1 and step = ?2", modelId, step);
        }
    }

    /** The checkpoint of {@code step}, or the latest when {@code step} is null. */
    @Transactional
    public Optional<Stored> stored(String modelId, Integer step) {
        Sort newest = Sort.descending("step");
        Optional<Checkpoint> checkpoint = step == null
                ? Checkpoint.find("modelId", newest, modelId).firstResultOptional()
                : Checkpoint.find("modelId = ?1 and step = ?2", modelId, step).firstResultOptional();
        return checkpoint.map(c -> new Stored(c.step, c.artifactVersionId));
    }

    /** The checkpoint the artifact version holds, when it is one of the model's. */
    @Transactional
    public Optional<Stored> storedVersion(String modelId, long artifactVersionId) {
        return Checkpoint.<Checkpoint> find("modelId = ?1 and artifactVersionId = ?2", modelId, artifactVersionId)
                .firstResultOptional().map(c -> new Stored(c.step, c.artifactVersionId));
    }

    /** A model's checkpoint of a step. */
    public record Step(String modelId, int step) {
    }

    /**
     * The size of each checkpoint (the bytes of its files), by model and step; a step with no checkpoint is left out.
     * Checks no rights: for a caller that checked them on the models.
     */
    @Transactional
    public Map<Step, Long> sizes(Collection<Step> steps) {
        if (steps.isEmpty()) {
            return Map.of();
        }
        Set<Step> asked = Set.copyOf(steps);
        Map<Long, Step> byVersion = new HashMap<>();
        Checkpoint.<Checkpoint> list("modelId in ?1 and step in ?2",
                asked.stream().map(Step::modelId).distinct().toList(),
                asked.stream().map(Step::step).distinct().toList()).forEach(c -> {
                    Step step = new Step(c.modelId, c.step);
                    if (asked.contains(step)) {
                        byVersion.put(c.artifactVersionId, step);
                    }
                });
        Map<Step, Long> sizes = new HashMap<>();
        versions.sizes(byVersion.keySet()).forEach((version, size) -> sizes.put(byVersion.get(version), size));
        return sizes;
    }

    /** The model's latest checkpoint step, null when it has none. */
    Integer latestStep(String modelId) {
        return em.createQuery("select max(step) from Checkpoint where modelId = :model", Integer.class)
                .setParameter("model", modelId).getSingleResult();
    }

    /**
     * Creates checkpoint {@code step} from the files' contents (stored in the blob store first); see {@link #addBlobs}.
     */
    @Transactional
    public VersionView add(ModelView model, int step, Map<String, byte[]> files, ObjectNode metrics) {
        List<StoredFile> stored = new ArrayList<>();
        files.forEach((path, content) -> stored.add(store(path, content)));
        return addBlobs(model, step, stored, metrics);
    }

    /** Puts one file's content in the blob store, as a file of a checkpoint to come. */
    StoredFile store(String path, byte[] content) {
        try {
            BlobStore.Blob blob = checksums.put(new ByteArrayInputStream(content), content.length).blob();
            return new StoredFile(path, blob.digest(), blob.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Creates checkpoint {@code step} from files already in the blob store (a worker's uploads are its files as they
     * are, not copied): a new artifact version of the model's collection (the collection is created with the first one)
     * with aliases {@code step{N}} and {@code latest}, through the artifact service, so the alias events reach
     * automations. Joins the caller's transaction.
     */
    @Transactional
    public VersionView addBlobs(ModelView model, int step, List<StoredFile> files, ObjectNode metrics) {
        ObjectNode metadata = JsonNodeFactory.instance.objectNode().put("model_id", model.id())
                .put("base_model", model.baseModel()).put("step", step);
        metadata.set("metrics", metrics);
        VersionView version = versionWrites.createVersionFromBlobs(model.entity(), model.project(), model.name(),
                ARTIFACT_TYPE, "Checkpoint step " + step, metadata, files).version();
        version = labels.add(
                new ArtifactLabels.ProjectVersion(model.entity(), model.project(), model.name(), version.version()),
                ArtifactLabels.Label.ALIAS, "step" + step);
        Checkpoint checkpoint = new Checkpoint();
        checkpoint.modelId = model.id();
        checkpoint.step = step;
        checkpoint.artifactVersionId = version.id();
        checkpoint.metrics = storedJson.write(metrics);
        checkpoint.persistAndFlush();
        return version;
    }
}

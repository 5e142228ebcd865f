package dev.fulcrum.training;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.json.JsonInput;
import dev.fulcrum.training.Checkpoints.CheckpointView;
import dev.fulcrum.training.TrainingJobs.EventView;
import dev.fulcrum.training.TrainingJobs.JobView;
import dev.fulcrum.training.TrainingLogs.LogView;
import dev.fulcrum.training.TrainingModels.ModelView;
import dev.fulcrum.training.api.model.TrainingCheckpoint;
import dev.fulcrum.training.api.model.TrainingCheckpointPage;
import dev.fulcrum.training.api.model.TrainingJob;
import dev.fulcrum.training.api.model.TrainingJobEvent;
import dev.fulcrum.training.api.model.TrainingJobEventPage;
import dev.fulcrum.training.api.model.TrainingJobPage;
import dev.fulcrum.training.api.model.TrainingLogEntry;
import dev.fulcrum.training.api.model.TrainingLogEntryPage;
import dev.fulcrum.training.api.model.TrainingModel;
import dev.fulcrum.training.api.model.TrainingModelPage;

/** Service records to API models of the training document. */
final class TrainingMapper {

    private static final ObjectMapper JSON = JsonInput.configure(new ObjectMapper());

    private TrainingMapper() {
    }

    static TrainingModel model(ModelView m) {
        return new TrainingModel().id(m.id()).entity(m.entity()).project(m.project()).name(m.name())
                .baseModel(m.baseModel()).runId(m.runName()).createdAt(m.createdAt());
    }

    static TrainingModelPage models(CursorPage<ModelView> page) {
        List<TrainingModel> data = page.items().stream().map(TrainingMapper::model).toList();
        return new TrainingModelPage()._object(TrainingModelPage.ObjectEnum.LIST).data(data)
                .firstId(data.isEmpty() ? null : data.get(0).getId())
                .lastId(data.isEmpty() ? null : data.get(data.size() - 1).getId()).hasMore(page.hasMore());
    }

    static TrainingCheckpoint checkpoint(CheckpointView c) {
        Map<String, BigDecimal> metrics = new LinkedHashMap<>();
        c.metrics().fields().forEachRemaining(e -> {
            if (e.getValue().isNumber()) {
                metrics.put(e.getKey(), e.getValue().decimalValue());
            }
        });
        return new TrainingCheckpoint().id(c.id()).step(c.step()).metrics(metrics).artifact(c.artifact())
                .createdAt(c.createdAt());
    }

    static TrainingCheckpointPage checkpoints(CursorPage<CheckpointView> page) {
        List<TrainingCheckpoint> data = page.items().stream().map(TrainingMapper::checkpoint).toList();
        return new TrainingCheckpointPage()._object(TrainingCheckpointPage.ObjectEnum.LIST).data(data)
                .firstId(data.isEmpty() ? null : data.get(0).getId())
                .lastId(data.isEmpty() ? null : data.get(data.size() - 1).getId()).hasMore(page.hasMore());
    }

    static TrainingJob job(JobView j) {
        return new TrainingJob().id(j.id()).kind(TrainingJob.KindEnum.fromValue(j.kind())).modelId(j.modelId())
                .status(TrainingJob.StatusEnum.fromValue(j.status())).createdAt(j.createdAt()).startedAt(j.startedAt())
                .finishedAt(j.finishedAt()).error(j.error()).checkpointStep(j.checkpointStep());
    }

    static TrainingJobPage jobs(CursorPage<JobView> page) {
        List<TrainingJob> data = page.items().stream().map(TrainingMapper::job).toList();
        return new TrainingJobPage()._object(TrainingJobPage.ObjectEnum.LIST).data(data)
                .firstId(data.isEmpty() ? null : data.get(0).getId())
                .lastId(data.isEmpty() ? null : data.get(data.size() - 1).getId()).hasMore(page.hasMore());
    }

    @SuppressWarnings("unchecked")
    static TrainingJobEventPage events(CursorPage<EventView> page) {
        List<TrainingJobEvent> data = page.items().stream()
                .map(e -> new TrainingJobEvent().id(Long.toString(e.id()))
                        .type(TrainingJobEvent.TypeEnum.fromValue(e.type()))
                        .data(JSON.convertValue(e.data(), Map.class)).createdAt(e.createdAt()))
                .toList();
        return new TrainingJobEventPage()._object(TrainingJobEventPage.ObjectEnum.LIST).data(data)
                .firstId(data.isEmpty() ? null : data.get(0).getId())
                .lastId(data.isEmpty() ? null : data.get(data.size() - 1).getId()).hasMore(page.hasMore());
    }

    static TrainingLogEntryPage logs(CursorPage<LogView> page) {
        List<TrainingLogEntry> data = page.items().stream()
                .map(l -> new TrainingLogEntry().id(Long.toString(l.id())).modelId(l.modelId()).split(l.split())
                        .step(l.step()).trajectoryGroups(groups(l)).createdAt(l.createdAt()))
                .toList();
        return new TrainingLogEntryPage()._object(TrainingLogEntryPage.ObjectEnum.LIST).data(data)
                .firstId(data.isEmpty() ? null : data.get(0).getId())
                .lastId(data.isEmpty() ? null : data.get(data.size() - 1).getId()).hasMore(page.hasMore());
    }

    private static List<ObjectNode> groups(LogView log) {
        List<ObjectNode> groups = new ArrayList<>();
        log.groups().forEach(group -> groups.add((ObjectNode) group));
        return groups;
    }
}

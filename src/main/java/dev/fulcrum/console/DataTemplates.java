package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.artifacts.api.model.ArtifactVersion;
import dev.fulcrum.artifacts.api.model.Collection;
import dev.fulcrum.datasets.api.model.DatasetReadRes;
import dev.fulcrum.datasets.api.model.ObjSchema;
import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.training.api.model.TrainingModel;

/** The pages of a project's overview, its datasets and artifacts, and a registry's artifacts. */
@CheckedTemplate(basePath = "console")
final class DataTemplates {

    private DataTemplates() {
    }

    static native TemplateInstance project(String entity, String project, String base, List<DatasetReadRes> datasets,
            List<Collection> collections, DataPages.Section<Run> runs, DataPages.Section<TrainingModel> models,
            DataPages.Section<DataPages.EventView> events);

    static native TemplateInstance datasets(String entity, String project, String base, List<DatasetReadRes> datasets);

    static native TemplateInstance dataset(String entity, String project, String base, String dataset,
            List<ObjSchema> versions, boolean editable);

    static native TemplateInstance datasetRows(String entity, String project, String base, String dataset,
            ObjSchema version, String rowsRef, DataPages.RowsPage rows, boolean editable);

    static native TemplateInstance artifacts(ArtifactPages.Scope scope, List<ArtifactPages.TypeGroup> types);

    static native TemplateInstance artifactCollection(ArtifactPages.Scope scope, String collection,
            List<String> collectionTags, List<ArtifactVersion> versions, Integer previousOffset, Integer nextOffset);

    static native TemplateInstance artifactVersion(ArtifactPages.Scope scope, ArtifactVersion version,
            List<ArtifactPages.Meta> metadata, String sourcePath, List<String> registries);
}

package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.artifacts.api.model.ArtifactVersion;
import dev.fulcrum.artifacts.api.model.Collection;
import dev.fulcrum.datasets.api.model.DatasetReadRes;
import dev.fulcrum.datasets.api.model.ObjSchema;
import dev.fulcrum.events.api.model.PlatformEvent;
import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.training.api.model.TrainingModel;

/** The pages of a project's overview, its datasets and artifacts, and a registry's artifacts. */
@CheckedTemplate(basePath = "console")
final class DataTemplates {

    /** One cell of a table: a scalar as text, or a nested value in brief with its whole JSON to expand. */
    public record Cell(String text, boolean nested, String full) {
    }

    public record RowView(int index, List<Cell> cells) {
    }

    public record RowsPage(List<String> columns, List<RowView> rows, int page, int pages, int total, int from, int to) {

        public boolean hasPrevious() {
            return page > 1;
        }

        public boolean hasNext() {
            return page < pages;
        }

        public int previousPage() {
            return page - 1;
        }

        public int nextPage() {
            return page + 1;
        }
    }

    public record EventView(PlatformEvent event, Cell payload) {
    }

    /** A section of the overview the API may refuse to the reader: its items, or why there are none. */
    public record Section<T>(List<T> items, String refused) {
    }

    /** Where the artifact screens are and who may change things there. */
    public record Scope(String title, String path, String home, boolean editable, boolean registry) {
    }

    public record CollectionRow(String name, int versionCount, String description, Object created) {
    }

    public record TypeGroup(String type, List<CollectionRow> collections) {
    }

    public record Meta(String key, Cell value) {
    }

    private DataTemplates() {
    }

    static native TemplateInstance project(String entity, String project, String base, List<DatasetReadRes> datasets,
            List<Collection> collections, Section<Run> runs, Section<TrainingModel> models, Section<EventView> events);

    static native TemplateInstance datasets(String entity, String project, String base, List<DatasetReadRes> datasets);

    static native TemplateInstance dataset(String entity, String project, String base, String dataset,
            List<ObjSchema> versions, boolean editable);

    static native TemplateInstance datasetRows(String entity, String project, String base, String dataset,
            ObjSchema version, String rowsRef, RowsPage rows, boolean editable);

    static native TemplateInstance artifacts(Scope scope, List<TypeGroup> types);

    static native TemplateInstance artifactCollection(Scope scope, String collection, List<String> collectionTags,
            List<ArtifactVersion> versions, Integer previousOffset, Integer nextOffset);

    static native TemplateInstance artifactVersion(Scope scope, ArtifactVersion version, List<Meta> metadata,
            String sourcePath, List<String> registries);
}

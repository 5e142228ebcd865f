package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import jakarta.inject.Inject;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.artifacts.api.ArtifactsApi;
import dev.fulcrum.artifacts.api.model.ArtifactVersion;
import dev.fulcrum.artifacts.api.model.Collection;
import dev.fulcrum.artifacts.api.model.CollectionList;
import dev.fulcrum.artifacts.api.model.LinkCreate;
import dev.fulcrum.artifacts.api.model.VersionPage;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * A project's artifacts: collections by type, a collection's versions, a version's files (downloaded through this
 * console, which reads them with the API's download in process), metadata, aliases, tags, and linking it into a
 * registry collection. {@link RegistryArtifactPages} shows a registry's collections with the same templates.
 */
@Path("/console/projects/{entity}/{project}/artifacts")
@AuthenticatesWithSession
@Blocking
public class ArtifactPages {

    static final int VERSIONS_PER_PAGE = 50;

    @Inject
    ConsoleRequest console;

    @Inject
    DataRoles roles;

    @Inject
    ArtifactsApi api;

    private DataTemplates.Scope scope(String entity, String project) {
        return new DataTemplates.Scope(entity + "/" + project, DataPages.base(entity, project) + "/artifacts",
                DataPages.base(entity, project), roles.projectWriter(entity), false);
    }

    static List<DataTemplates.TypeGroup> byType(List<Map.Entry<String, DataTemplates.CollectionRow>> rows) {
        Map<String, List<DataTemplates.CollectionRow>> types = new java.util.TreeMap<>();
        for (Map.Entry<String, DataTemplates.CollectionRow> row : rows) {
            types.computeIfAbsent(row.getKey(), t -> new ArrayList<>()).add(row.getValue());
        }
        List<DataTemplates.TypeGroup> groups = new ArrayList<>();
        types.forEach((type, collections) -> groups.add(new DataTemplates.TypeGroup(type, collections)));
        return groups;
    }

    static List<DataTemplates.Meta> metadata(DataPages cells, ObjectNode metadata) {
        List<DataTemplates.Meta> entries = new ArrayList<>();
        if (metadata != null) {
            for (Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> fields = metadata.fields(); fields
                    .hasNext();) {
                Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> field = fields.next();
                entries.add(new DataTemplates.Meta(field.getKey(), cells.cell(field.getValue())));
            }
        }
        return entries;
    }

    static String versionPath(DataTemplates.Scope scope, String collection, String version) {
        return scope.path() + "/" + Pages.path(collection) + "/versions/" + Pages.path(version);
    }

    /**
     * Runs a form's operation like {@link Pages#act}; a value the generated interface's constraints refuse (a name with
     * a space, say) is shown like the API's own 422.
     */
    static Response act(ConsoleRequest console, Runnable operation, String then, Supplier<TemplateInstance> page) {
        return Pages.act(console, () -> {
            try {
                operation.run();
            } catch (ConstraintViolationException e) {
                if (e.getConstraintViolations().isEmpty()) {
                    throw ApiException.invalid(Violation.of(e.getMessage(), "value_error", "path"));
                }
                var violation = e.getConstraintViolations().iterator().next();
                String field = "";
                for (var node : violation.getPropertyPath()) {
                    field = String.valueOf(node.getName());
                }
                throw ApiException.invalid(Violation.of(violation.getMessage(), "value_error", "path", field));
            }
        }, then, page);
    }

    /** A file of a version as the API's download answers it, or the error page when the API refuses. */
    static Response download(Supplier<Response> read, String path) {
        try {
            // the API's own answer: its type, length, ETag, ranges and Content-Disposition; a file may be private, so
            // the browser keeps it no more than the pages that link it
            return Response.fromResponse(read.get()).header("Cache-Control", "private, no-store").build();
        } catch (ApiException e) {
            return Pages.html(Pages.status(e), ConsoleTemplates.error(Pages.status(e), e.getMessage()));
        } catch (ConstraintViolationException e) {
            return Pages.html(422, ConsoleTemplates.error(422, "Not a file of this version: " + path));
        }
    }

    static String blankToMissing(String value) {
        return value == null ? "" : value.strip();
    }

    @GET
    public Response collections(@RestPath String entity, @RestPath String project) {
        return Pages.page(() -> {
            List<Map.Entry<String, DataTemplates.CollectionRow>> rows = new ArrayList<>();
            for (Collection c : Pages.<CollectionList> body(api.listCollections(entity, project, null))
                    .getCollections()) {
                rows.add(Map.entry(c.getType(), new DataTemplates.CollectionRow(c.getName(), c.getVersionCount(),
                        c.getDescription(), c.getCreatedAt())));
            }
            return DataTemplates.artifacts(scope(entity, project), byType(rows));
        });
    }

    @GET
    @Path("/{collection}")
    public Response versions(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestQuery Integer offset) {
        return Pages.page(() -> collectionPage(entity, project, collection, offset));
    }

    private TemplateInstance collectionPage(String entity, String project, String collection, Integer offset) {
        int from = offset == null ? 0 : offset;
        Collection found = Pages.body(api.getCollection(entity, project, collection));
        VersionPage page = Pages.body(api.listVersions(entity, project, collection, VERSIONS_PER_PAGE, from));
        return DataTemplates.artifactCollection(scope(entity, project), collection, found.getTags(), page.getVersions(),
                from == 0 ? null : Math.max(0, from - VERSIONS_PER_PAGE), page.getNextOffset());
    }

    private Response collectionTag(String entity, String project, String collection, Runnable operation) {
        return act(console, operation, scope(entity, project).path() + "/" + Pages.path(collection),
                () -> collectionPage(entity, project, collection, null));
    }

    @POST
    @Path("/{collection}/tags")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addCollectionTag(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestForm String tag) {
        return collectionTag(entity, project, collection,
                () -> api.addCollectionTag(entity, project, collection, blankToMissing(tag)));
    }

    @POST
    @Path("/{collection}/tags/{tag}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeCollectionTag(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String tag) {
        return collectionTag(entity, project, collection,
                () -> api.removeCollectionTag(entity, project, collection, tag));
    }

    @Inject
    DataPages cells;

    private TemplateInstance versionPage(String entity, String project, String collection, String version) {
        DataTemplates.Scope scope = scope(entity, project);
        ArtifactVersion found = Pages.body(api.getVersion(entity, project, collection, version));
        return DataTemplates.artifactVersion(scope, found, metadata(cells, found.getMetadata()), null,
                scope.editable() ? roles.linkTargets() : List.of());
    }

    @GET
    @Path("/{collection}/versions/{version}")
    public Response version(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version) {
        return Pages.page(() -> versionPage(entity, project, collection, version));
    }

    @GET
    @Path("/{collection}/versions/{version}/files")
    public Response file(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestQuery String path, @RestHeader("Range") String range,
            @RestHeader("If-None-Match") String ifNoneMatch) {
        return download(() -> api.downloadFile(entity, project, collection, version, path, range, ifNoneMatch),
                path == null ? "" : path);
    }

    private Response label(String entity, String project, String collection, String version, Runnable operation) {
        return act(console, operation, versionPath(scope(entity, project), collection, version),
                () -> versionPage(entity, project, collection, version));
    }

    @POST
    @Path("/{collection}/versions/{version}/aliases")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addAlias(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestForm String alias) {
        return label(entity, project, collection, version,
                () -> api.addAlias(entity, project, collection, version, blankToMissing(alias)));
    }

    @POST
    @Path("/{collection}/versions/{version}/aliases/{alias}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeAlias(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestPath String alias) {
        return label(entity, project, collection, version,
                () -> api.removeAlias(entity, project, collection, version, alias));
    }

    @POST
    @Path("/{collection}/versions/{version}/tags")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addTag(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestForm String tag) {
        return label(entity, project, collection, version,
                () -> api.addTag(entity, project, collection, version, blankToMissing(tag)));
    }

    @POST
    @Path("/{collection}/versions/{version}/tags/{tag}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeTag(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestPath String tag) {
        return label(entity, project, collection, version,
                () -> api.removeTag(entity, project, collection, version, tag));
    }

    @POST
    @Path("/{collection}/versions/{version}/links")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response link(@RestPath String entity, @RestPath String project, @RestPath String collection,
            @RestPath String version, @RestForm String registry,
            @RestForm("registry_collection") String registryCollection) {
        LinkedHashMap<String, String> target = new LinkedHashMap<>();
        target.put("registry", blankToMissing(registry));
        target.put("collection", blankToMissing(registryCollection));
        return act(console,
                () -> api.linkVersion(entity, project, collection, version,
                        new LinkCreate().registry(target.get("registry")).collection(target.get("collection"))),
                "/console/registries/" + Pages.path(target.get("registry")) + "/artifacts/"
                        + Pages.path(target.get("collection")),
                () -> versionPage(entity, project, collection, version));
    }
}

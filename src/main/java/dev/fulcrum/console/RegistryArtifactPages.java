package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
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

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.artifacts.api.RegistryArtifactsApi;
import dev.fulcrum.artifacts.api.model.ArtifactVersion;
import dev.fulcrum.artifacts.api.model.RegistryCollection;
import dev.fulcrum.artifacts.api.model.RegistryCollectionList;
import dev.fulcrum.artifacts.api.model.VersionPage;

/**
 * A registry's artifacts, with the screens of a project's ({@link ArtifactPages}): its collections by type, the
 * versions linked into one, and a linked version with its files, metadata, aliases and tags of the registry collection,
 * and the project version it comes from. Registry members read; its members and admins label.
 */
@Path("/console/registries/{registry}/artifacts")
@AuthenticatesWithSession
@Blocking
public class RegistryArtifactPages {

    @Inject
    ConsoleRequest console;

    @Inject
    DataRoles roles;

    @Inject
    RegistryArtifactsApi api;

    @Inject
    DataPages cells;

    private DataTemplates.Scope scope(String registry) {
        return new DataTemplates.Scope("registry " + registry,
                "/console/registries/" + Pages.path(registry) + "/artifacts", null, roles.registryWriter(registry),
                true);
    }

    /** The console page of the project version a reference names ({@code wandb-artifact:///e/p/c:vN}). */
    static String sourcePath(String reference) {
        String prefix = "wandb-artifact:///";
        if (reference == null || !reference.startsWith(prefix)) {
            return null;
        }
        String[] parts = reference.substring(prefix.length()).split("/");
        int colon = parts.length == 3 ? parts[2].indexOf(':') : -1;
        if (colon < 0) {
            return null;
        }
        return DataPages.base(parts[0], parts[1]) + "/artifacts/" + Pages.path(parts[2].substring(0, colon))
                + "/versions/" + Pages.path(parts[2].substring(colon + 1));
    }

    @GET
    public Response collections(@RestPath String registry) {
        return Pages.page(() -> {
            List<Map.Entry<String, DataTemplates.CollectionRow>> rows = new ArrayList<>();
            for (RegistryCollection c : Pages.<RegistryCollectionList> body(api.listRegistryCollections(registry, null))
                    .getCollections()) {
                rows.add(Map.entry(c.getType(), new DataTemplates.CollectionRow(c.getName(), c.getVersionCount(), null,
                        c.getLatestLinkedAt())));
            }
            return DataTemplates.artifacts(scope(registry), ArtifactPages.byType(rows));
        });
    }

    @GET
    @Path("/{collection}")
    public Response versions(@RestPath String registry, @RestPath String collection, @RestQuery Integer offset) {
        return Pages.page(() -> collectionPage(registry, collection, offset));
    }

    private TemplateInstance collectionPage(String registry, String collection, Integer offset) {
        int from = offset == null ? 0 : offset;
        VersionPage page = Pages
                .body(api.listLinkedVersions(registry, collection, ArtifactPages.VERSIONS_PER_PAGE, from));
        List<String> tags = Pages.<RegistryCollectionList> body(api.listRegistryCollections(registry, null))
                .getCollections().stream().filter(c -> c.getName().equals(collection)).findFirst()
                .map(RegistryCollection::getTags).orElse(List.of());
        return DataTemplates.artifactCollection(scope(registry), collection, tags, page.getVersions(),
                from == 0 ? null : Math.max(0, from - ArtifactPages.VERSIONS_PER_PAGE), page.getNextOffset());
    }

    private Response collectionTag(String registry, String collection, Runnable operation) {
        return ArtifactPages.act(console, operation, scope(registry).path() + "/" + Pages.path(collection),
                () -> collectionPage(registry, collection, null));
    }

    @POST
    @Path("/{collection}/tags")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addCollectionTag(@RestPath String registry, @RestPath String collection, @RestForm String tag) {
        return collectionTag(registry, collection,
                () -> api.addRegistryCollectionTag(registry, collection, ArtifactPages.blankToMissing(tag)));
    }

    @POST
    @Path("/{collection}/tags/{tag}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeCollectionTag(@RestPath String registry, @RestPath String collection, @RestPath String tag) {
        return collectionTag(registry, collection, () -> api.removeRegistryCollectionTag(registry, collection, tag));
    }

    private TemplateInstance versionPage(String registry, String collection, String version) {
        ArtifactVersion found = Pages.body(api.getLinkedVersion(registry, collection, version));
        return DataTemplates.artifactVersion(scope(registry), found, ArtifactPages.metadata(cells, found.getMetadata()),
                sourcePath(found.getSource()), List.of());
    }

    @GET
    @Path("/{collection}/versions/{version}")
    public Response version(@RestPath String registry, @RestPath String collection, @RestPath String version) {
        return Pages.page(() -> versionPage(registry, collection, version));
    }

    @GET
    @Path("/{collection}/versions/{version}/files")
    public Response file(@RestPath String registry, @RestPath String collection, @RestPath String version,
            @RestQuery String path, @RestHeader("Range") String range,
            @RestHeader("If-None-Match") String ifNoneMatch) {
        return ArtifactPages.download(
                () -> api.downloadLinkedFile(registry, collection, version, path, range, ifNoneMatch),
                path == null ? "" : path);
    }

    private Response label(String registry, String collection, String version, Runnable operation) {
        return ArtifactPages.act(console, operation, ArtifactPages.versionPath(scope(registry), collection, version),
                () -> versionPage(registry, collection, version));
    }

    @POST
    @Path("/{collection}/versions/{version}/aliases")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addAlias(@RestPath String registry, @RestPath String collection, @RestPath String version,
            @RestForm String alias) {
        return label(registry, collection, version,
                () -> api.addLinkedAlias(registry, collection, version, ArtifactPages.blankToMissing(alias)));
    }

    @POST
    @Path("/{collection}/versions/{version}/aliases/{alias}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeAlias(@RestPath String registry, @RestPath String collection, @RestPath String version,
            @RestPath String alias) {
        return label(registry, collection, version, () -> api.removeLinkedAlias(registry, collection, version, alias));
    }

    @POST
    @Path("/{collection}/versions/{version}/tags")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response addTag(@RestPath String registry, @RestPath String collection, @RestPath String version,
            @RestForm String tag) {
        return label(registry, collection, version,
                () -> api.addLinkedTag(registry, collection, version, ArtifactPages.blankToMissing(tag)));
    }

    @POST
    @Path("/{collection}/versions/{version}/tags/{tag}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeTag(@RestPath String registry, @RestPath String collection, @RestPath String version,
            @RestPath String tag) {
        return label(registry, collection, version, () -> api.removeLinkedTag(registry, collection, version, tag));
    }
}

package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.artifacts.ArtifactCollections;
import dev.fulcrum.artifacts.ArtifactCollections.CollectionPage;
import dev.fulcrum.artifacts.ArtifactCollections.TypeView;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.CollectionView;
import dev.fulcrum.artifacts.ArtifactViews.Page;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.RegistryLinks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbArtifactNodes.CollectionNode;
import dev.fulcrum.wandb.WandbArtifactNodes.TypeNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The public API's listings of artifacts: {@code Api().artifact_types(project)} ({@code project { artifactTypes }}),
 * {@code Api().artifact_collections(project, type)} and {@code artifact_type.collections()} ({@code artifactType(name)
 * { artifactCollections }}), {@code Api().artifacts(type, name)} ({@code artifactCollection(name) { artifacts }}), read
 * from the artifacts store with its rights (the project's viewers read). A project's collections and versions only: a
 * registry's are listed by the registries REST API.
 */
@ApplicationScoped
class WandbArtifactLists {

    static final int DEFAULT_PAGE = 50;

    @Inject
    ArtifactCollections collections;

    @Inject
    ArtifactVersions versions;

    @Inject
    RegistryLinks links;

    @Inject
    WandbArtifactReads reads;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring
                .type("Project",
                        type -> type.dataFetcher("artifactType", this::artifactType)
                                .dataFetcher("artifactTypes", this::artifactTypes)
                                .dataFetcher("artifactCollections", env -> collections(env, env.getSource(), null)))
                .type("ArtifactType", type -> type.dataFetcher("artifactCollection", env -> {
                    TypeNode artifactType = env.getSource();
                    if (artifactType.project() == null) {
                        return null;
                    }
                    CollectionNode found = reads.collection(artifactType.project(), env.getArgument("name"));
                    return found != null && artifactType.name().equals(found.type()) ? found : null;
                }).dataFetcher("artifactCollections", env -> {
                    TypeNode artifactType = env.getSource();
                    return artifactType.project() == null ? null
                            : collections(env, artifactType.project(), artifactType.name());
                }).dataFetcher("description", env -> null).dataFetcher("createdAt", env -> {
                    TypeNode artifactType = env.getSource();
                    return artifactType.createdAt() == null ? null : artifactType.createdAt().toString();
                })).type("ArtifactSequence",
                        type -> type.dataFetcher("description", this::description)
                                .dataFetcher("createdAt", this::createdAt)
                                // not kept: a collection changes only by its versions
                                .dataFetcher("updatedAt", env -> null)
                                .dataFetcher("defaultArtifactType",
                                        env -> TypeNode.of(((CollectionNode) env.getSource()).type(), null, null))
                                .dataFetcher("artifacts", this::artifacts));
    }

    private String description(DataFetchingEnvironment env) {
        CollectionNode node = env.getSource();
        return node.registry() != null ? null : view(node).description();
    }

    /** When the collection was made; a registry's collection was made by its first link. */
    private String createdAt(DataFetchingEnvironment env) {
        CollectionNode node = env.getSource();
        return (node.registry() != null ? links.firstLinkedAt(node.registry(), node.name()) : view(node).createdAt())
                .toString();
    }

    /** A project's collection as listed, read when the node was made without it. */
    private CollectionView view(CollectionNode node) {
        return node.view() != null ? node.view()
                : collections.getCollection(node.entity(), node.project(), node.name());
    }

    /**
     * A type of the project's collections; null when it has none of that type. A registry's project answers any type
     * name (its collections are found by name, as the SDK reads a registry's collection before it unlinks from it).
     */
    private TypeNode artifactType(DataFetchingEnvironment env) {
        ProjectNode project = env.getSource();
        String name = env.getArgument("name");
        if (project.registry() != null) {
            return TypeNode.of(name, project, null);
        }
        List<TypeView> found = collections.types(project.entityName(), project.name(), name, 1, 0);
        return found.isEmpty() ? null : TypeNode.of(name, project, found.get(0).createdAt());
    }

    private Map<String, Object> artifactTypes(DataFetchingEnvironment env) {
        ProjectNode project = ownProject(env.getSource());
        int size = WandbPages.size(env.getArgument("first"), DEFAULT_PAGE);
        int offset = WandbPages.offset(env.getArgument("after"));
        List<TypeView> types = collections.types(project.entityName(), project.name(), null, size + 1, offset);
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = 0; i < Math.min(size, types.size()); i++) {
            edges.add(Map.of("node", TypeNode.of(types.get(i).name(), project, types.get(i).createdAt()), "cursor",
                    WandbPages.cursor(offset + i)));
        }
        return WandbPages.connection(edges, types.size() > size, null);
    }

    /** The project's collections (of one type when given), newest first, with their count. */
    private Map<String, Object> collections(DataFetchingEnvironment env, ProjectNode source, String type) {
        ProjectNode project = ownProject(source);
        unfiltered(env.getArgument("filters"), env.getArgument("order"));
        int size = WandbPages.size(env.getArgument("first"), DEFAULT_PAGE);
        int offset = WandbPages.offset(env.getArgument("after"));
        CollectionPage page = collections.pageCollections(project.entityName(), project.name(), type, size, offset);
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = 0; i < page.collections().size(); i++) {
            edges.add(Map.of("node", CollectionNode.of(page.collections().get(i)), "cursor",
                    WandbPages.cursor(offset + i)));
        }
        return WandbPages.connection(edges, offset + edges.size() < page.total(), page.total());
    }

    /**
     * The versions of a project's collection, newest first ({@code order}: {@code +versionIndex} or {@code +createdAt}
     * oldest first, the same with {@code -} newest first); {@code filters} may only ask the committed ones (the SDK's
     * default {@code {"state": "COMMITTED"}}): drafts are not listed.
     */
    private Map<String, Object> artifacts(DataFetchingEnvironment env) {
        CollectionNode collection = env.getSource();
        if (collection.registry() != null) {
            throw ApiException.invalid(Violation.of(
                    "The versions of a registry's collection are listed by the registries REST API"
                            + " (/api/v1/registries/{registry}/collections/{collection}/versions)",
                    "value_error", "query", "artifactCollection"));
        }
        committedOnly(env.getArgument("filters"));
        boolean oldestFirst = oldestFirst(env.getArgument("order"));
        int size = WandbPages.size(env.getArgument("first"), DEFAULT_PAGE);
        int offset = WandbPages.offset(env.getArgument("after"));
        CollectionView view = collections.getCollection(collection.entity(), collection.project(), collection.name());
        Page page = versions.listVersions(collection.entity(), collection.project(), collection.name(), size, offset,
                oldestFirst);
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = 0; i < page.versions().size(); i++) {
            VersionView version = page.versions().get(i);
            edges.add(Map.of("node", ArtifactNode.of(version), "version", version.version(), "cursor",
                    WandbPages.cursor(offset + i)));
        }
        return WandbPages.connection(edges, page.nextOffset() != null, (long) view.versionCount());
    }

    /** The project the listing is of: a project's own (a registry's collections are listed by the REST API). */
    private static ProjectNode ownProject(ProjectNode project) {
        if (project.registry() != null) {
            throw ApiException
                    .invalid(Violation.of(
                            "A registry's collections and types are listed by the registries REST API"
                                    + " (/api/v1/registries/{registry}/collections)",
                            "value_error", "query", "project"));
        }
        return project;
    }

    /** Collections are listed newest first, unfiltered (W&B's filters and orders of collections are not offered). */
    private static void unfiltered(String filters, String order) {
        if (filters != null && !filters.isBlank() && !SdkJson.object(filters, "filters").isEmpty()) {
            throw ApiException
                    .invalid(Violation.of("Collections are listed unfiltered here", "value_error", "query", "filters"));
        }
        if (order != null && !order.isBlank()) {
            throw ApiException
                    .invalid(Violation.of("Collections are listed newest first here", "value_error", "query", "order"));
        }
    }

    private static void committedOnly(String filters) {
        if (filters == null || filters.isBlank()) {
            return;
        }
        ObjectNode given = SdkJson.object(filters, "filters");
        given.fieldNames().forEachRemaining(key -> {
            if (!key.equals("state")) {
                throw ApiException.invalid(Violation.of("Versions are filtered by state only, not by " + key,
                        "value_error", "query", "filters", key));
            }
        });
        if (given.has("state") && !"COMMITTED".equals(given.get("state").asText(null))) {
            throw ApiException
                    .invalid(Violation.of("Only committed versions are listed (state COMMITTED): drafts are not",
                            "value_error", "query", "filters", "state"));
        }
    }

    private static boolean oldestFirst(String order) {
        if (order == null || order.isBlank()) {
            return false;
        }
        String field = order.startsWith("+") || order.startsWith("-") ? order.substring(1) : order;
        if (!field.equals("versionIndex") && !field.equals("createdAt")) {
            throw ApiException.invalid(Violation.of(
                    "Versions are ordered by versionIndex or createdAt (the same order here), not by " + field,
                    "value_error", "query", "order"));
        }
        return !order.startsWith("-");
    }
}

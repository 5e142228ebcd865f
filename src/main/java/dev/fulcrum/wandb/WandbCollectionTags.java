package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.artifacts.ArtifactCollections;
import dev.fulcrum.artifacts.ArtifactViews.CollectionView;
import dev.fulcrum.artifacts.CollectionTags;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbArtifactNodes.CollectionNode;
import dev.fulcrum.wandb.WandbArtifactNodes.TagNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * A collection's tags and description as the SDK's {@code ArtifactCollection} edits them ({@code collection.tags = ...;
 * collection.save()}): {@code createArtifactCollectionTagAssignments} and
 * {@code deleteArtifactCollectionTagAssignments} (the artifacts API's collection tags, of a project's collection or,
 * addressed as {@code _registries} / {@code wandb-registry-<r>}, of a registry's) and {@code updateArtifactSequence},
 * which {@code save()} always sends (the description of a project's collection; Fulcrum does not rename collections,
 * and a registry's have none).
 */
@ApplicationScoped
class WandbCollectionTags {

    @Inject
    CollectionTags tags;

    @Inject
    ArtifactCollections collections;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring
                .type("Mutation",
                        type -> type.dataFetcher("createArtifactCollectionTagAssignments", env -> assign(env, true))
                                .dataFetcher("deleteArtifactCollectionTagAssignments", env -> assign(env, false))
                                .dataFetcher("updateArtifactSequence", this::updateSequence))
                .type("ArtifactSequence", type -> type.dataFetcher("tags", env -> {
                    CollectionNode node = env.getSource();
                    List<String> names = node
                            .registry() != null
                                    ? tags.inRegistry(node.registry(), node.name()).getTags()
                                    : (node.view() != null ? node.view()
                                            : collections.getCollection(node.entity(), node.project(), node.name()))
                                                    .tags();
                    return Map.of("edges", tagNodes(names).stream().map(tag -> Map.of("node", tag)).toList());
                }));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> input(DataFetchingEnvironment env) {
        return (Map<String, Object>) env.getArgument("input");
    }

    private static List<TagNode> tagNodes(List<String> names) {
        return names.stream().map(tag -> new TagNode(WandbNodes.opaque("Tag", tag), tag)).toList();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> assign(DataFetchingEnvironment env, boolean add) {
        Map<String, Object> input = input(env);
        String entity = (String) input.get("entityName");
        String project = (String) input.get("projectName");
        String collection = (String) input.get("artifactCollectionName");
        List<String> names = new ArrayList<>();
        List<Map<String, Object>> given = (List<Map<String, Object>>) input.get("tags");
        for (int i = 0; i < given.size(); i++) {
            Map<String, Object> tag = given.get(i);
            if (tag.get("tagCategoryName") != null || tag.get("attributes") != null) {
                throw ApiException.invalid(Violation.of("Tags have no category or attributes in Fulcrum", "value_error",
                        "body", "input", "tags", i));
            }
            names.add((String) tag.get("tagName"));
        }
        String registry = WandbRegistries.registryOf(entity, project);
        if (registry == null && WandbRegistries.ORG_ENTITY.equals(entity)) {
            throw ApiException.notFound("No registry " + project);
        }
        if (registry != null) {
            if (add) {
                tags.addInRegistry(registry, collection, names);
            } else {
                tags.removeInRegistry(registry, collection, names);
            }
        } else if (add) {
            tags.add(entity, project, collection, names);
        } else {
            tags.remove(entity, project, collection, names);
        }
        Map<String, Object> payload = new HashMap<>();
        payload.put("clientMutationId", input.get("clientMutationID"));
        if (add) {
            payload.put("tags", tagNodes(names));
        } else {
            payload.put("success", true);
        }
        return payload;
    }

    /**
     * The SDK's {@code save()} sends the collection's name and description every time: the name must stay (Fulcrum does
     * not rename collections: 422), the description of a project's collection is changed, a registry's collection has
     * none (422 for one given).
     */
    private Map<String, Object> updateSequence(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        CollectionNode node = CollectionNode.parse((String) input.get("artifactSequenceID"));
        if (node == null) {
            throw ApiException.invalid(Violation.of("Not the id of an artifact collection", "value_error", "body",
                    "input", "artifactSequenceID"));
        }
        String name = (String) input.get("name");
        if (name != null && !name.equals(node.name())) {
            throw ApiException.invalid(Violation.of("Fulcrum does not rename collections: " + node.name(),
                    "value_error", "body", "input", "name"));
        }
        String description = (String) input.get("description");
        CollectionNode answered;
        if (node.registry() != null) {
            if (description != null) {
                throw ApiException.invalid(Violation.of("A registry's collections have no description in Fulcrum",
                        "value_error", "body", "input", "description"));
            }
            answered = CollectionNode.ofRegistry(node.registry(), node.name(),
                    tags.inRegistry(node.registry(), node.name()).getType());
        } else {
            CollectionView view = collections.getCollection(node.entity(), node.project(), node.name());
            if (input.containsKey("description") && !Objects.equals(description, view.description())) {
                view = collections.describe(node.entity(), node.project(), node.name(), description);
            }
            answered = CollectionNode.of(view);
        }
        Map<String, Object> payload = new HashMap<>();
        payload.put("artifactCollection", answered);
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }
}

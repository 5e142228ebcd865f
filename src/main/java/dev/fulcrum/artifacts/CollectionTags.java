package dev.fulcrum.artifacts;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Access.RegistryRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactViews.CollectionView;
import dev.fulcrum.artifacts.api.model.RegistryCollection;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Tags of collections: of a project's collection (its writers, the project's members, tag it) and of a registry's
 * collection (the registry's members). Adding a tag writes {@code ADD_COLLECTION_TAG} and removing one
 * {@code REMOVE_COLLECTION_TAG}, in the transaction of the change; adding a tag the collection has changes nothing and
 * records nothing. A registry collection exists by its links: its tags are kept by name and go with its last link.
 */
@ApplicationScoped
public class CollectionTags {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    PlatformEvents events;

    @Inject
    ArtifactCollections collections;

    @Inject
    RegistryLinks links;

    /** Tags the project's collection; the collection as it now is. */
    @Transactional
    public CollectionView add(String entity, String project, String collection, List<String> tags) {
        return change(entity, project, collection, tags, true);
    }

    /** Takes the tags from the project's collection; 404 if it does not have one of them (and nothing changes). */
    @Transactional
    public CollectionView remove(String entity, String project, String collection, List<String> tags) {
        return change(entity, project, collection, tags, false);
    }

    /** Tags the registry's collection; the collection as it now is. */
    @Transactional
    public RegistryCollection addInRegistry(String registry, String collection, List<String> tags) {
        return changeInRegistry(registry, collection, tags, true);
    }

    /** Takes the tags from the registry's collection; 404 if it does not have one of them (and nothing changes). */
    @Transactional
    public RegistryCollection removeInRegistry(String registry, String collection, List<String> tags) {
        return changeInRegistry(registry, collection, tags, false);
    }

    /** A registry's collection with its tags (a role on the registry; 404 when the collection has no link). */
    @Transactional
    public RegistryCollection inRegistry(String registry, String collection) {
        return links.collection(access.registry(registry, Role.VIEWER), collection);
    }

    private CollectionView change(String entity, String project, String name, List<String> asked, boolean add) {
        List<String> tags = distinct(asked);
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        ArtifactCollection collection = collections.require(ref, name);
        for (String tag : tags) {
            boolean changed = add ? ArtifactStatements.addCollectionTag(em, collection.id, tag)
                    : ArtifactStatements.removeCollectionTag(em, collection.id, tag);
            if (!add && !changed) {
                throw ApiException.notFound("Collection " + name + " has no tag " + tag);
            }
            if (changed) {
                record(add, Scope.project(ref.projectId()),
                        payload(ref.entity(), ref.project(), name, collection.type, tag));
            }
        }
        return collections.collection(ref, name);
    }

    private RegistryCollection changeInRegistry(String registry, String name, List<String> asked, boolean add) {
        List<String> tags = distinct(asked);
        RegistryRef ref = access.registry(registry, Role.MEMBER);
        links.lock(ref, name);
        RegistryLinks.Newest newest = links.newestLink(ref, name);
        for (String tag : tags) {
            boolean changed = add ? RegistryStatements.addCollectionTag(em, ref.registryId(), name, tag)
                    : RegistryStatements.removeCollectionTag(em, ref.registryId(), name, tag);
            if (!add && !changed) {
                throw ApiException.notFound("Collection " + name + " of registry " + registry + " has no tag " + tag);
            }
            if (changed) {
                // the registry's event, in the project of its newest link's version (as the registry's other events)
                ObjectNode payload = payload(newest.entity(), newest.project(), name, newest.type(), tag);
                payload.put("registry_name", ref.registry());
                record(add, new Scope(newest.projectId(), ref.registryId()), payload);
            }
        }
        return links.collection(ref, name);
    }

    /** The tags asked for, checked, each once (a tag named twice in one removal is removed, not missing). */
    private static List<String> distinct(List<String> asked) {
        asked.forEach(tag -> ArtifactNames.name(tag, "path", "tag"));
        return asked.stream().distinct().toList();
    }

    private void record(boolean add, Scope scope, ObjectNode payload) {
        Caller caller = access.caller();
        events.record(add ? EventType.ADD_COLLECTION_TAG : EventType.REMOVE_COLLECTION_TAG, scope, caller.userId(),
                caller.username(), payload);
    }

    private static ObjectNode payload(String entity, String project, String collection, String type, String tag) {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("entity_name", entity);
        payload.put("project_name", project);
        payload.put("artifact_collection_name", collection);
        payload.put("artifact_type", type);
        payload.put("tag", tag);
        return payload;
    }

    /** The tags of project collections, by collection id, sorted. */
    Map<Long, List<String>> of(List<Long> collectionIds) {
        if (collectionIds.isEmpty()) {
            return new HashMap<>();
        }
        return ArtifactStatements.collectionTags(em, collectionIds);
    }
}

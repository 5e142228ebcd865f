package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Access.RegistryRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Project;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactNames.Selector;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.LinkView;
import dev.fulcrum.artifacts.ArtifactViews.Page;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.api.model.RegistryCollection;
import dev.fulcrum.artifacts.api.model.RegistryCollectionList;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;

/**
 * Project versions linked into registry collections. A registry collection numbers its links {@code v0, v1, ...};
 * writers of one registry collection take its advisory lock, so link indexes and aliases stay consistent.
 */
@ApplicationScoped
public class RegistryLinks {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    PlatformEvents events;

    @Inject
    ArtifactVersions versions;

    public record Linked(LinkView link, boolean isNew) {
    }

    /** Links a project version into a registry collection; linking it again answers the existing link. */
    @Transactional
    public Linked link(String entity, String project, String collection, String version, String registry,
            String registryCollection) {
        Selector selector = Selector.parse(version, "path", "version");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        long versionId = versions.find(ref, collection, selector);
        RegistryRef target = access.registry(registry, Role.MEMBER);
        lock(target, registryCollection);
        VersionView source = versions.view(ref, versionId, false);
        RegistryLink existing = RegistryLink
                .<RegistryLink> find("registryId = ?1 and collectionName = ?2 and versionId = ?3", target.registryId(),
                        registryCollection, versionId)
                .firstResult();
        if (existing != null) {
            return new Linked(linkView(target, existing, source.reference()), false);
        }
        RegistryLink stored = new RegistryLink();
        stored.registryId = target.registryId();
        stored.collectionName = registryCollection;
        Integer newest = newest(target, registryCollection);
        stored.linkIndex = newest == null ? 0 : newest + 1;
        stored.versionId = versionId;
        stored.createdBy = access.caller().userId();
        stored.persist();
        LinkView link = linkView(target, stored, source.reference());
        ObjectNode payload = ArtifactViews.payload(source, source.version());
        linkPayload(payload, source, registry, registryCollection, link.index());
        Caller caller = access.caller();
        events.record(EventType.LINK_ARTIFACT, new Scope(ref.projectId(), target.registryId()), caller.userId(),
                caller.username(), payload);
        VersionView linked = linkedView(target, registryCollection, stored);
        recordLinked(EventType.ADD_ARTIFACT_ALIAS, target, linked, ArtifactViews.LATEST, "alias", ArtifactViews.LATEST);
        return new Linked(link, true);
    }

    /**
     * Removes a version's link from a registry collection (member role on the registry; 404 when the version is not
     * linked there), with the link's aliases and tags; the collection's {@code latest} is then its newest remaining
     * link. The version itself stays in its project. Writes {@code UNLINK_ARTIFACT} (scope: the registry and the
     * project of the version); the collection's tags go with its last link.
     */
    @Transactional
    public void unlink(String registry, String collection, long versionId) {
        RegistryRef target = access.registry(registry, Role.MEMBER);
        lock(target, collection);
        RegistryLink link = RegistryLink
                .<RegistryLink> find("registryId = ?1 and collectionName = ?2 and versionId = ?3", target.registryId(),
                        collection, versionId)
                .firstResult();
        if (link == null) {
            throw ApiException.notFound(
                    "Artifact version " + versionId + " is not linked into " + collection + " of registry " + registry);
        }
        unlink(target, link);
    }

    /**
     * Removes the link a selector names ({@code v<N>} of the registry collection, {@code latest} or an alias), as
     * {@link #unlink(String, String, long)} does.
     */
    @Transactional
    public void unlinkVersion(String registry, String collection, String version) {
        Selector selector = Selector.parse(version, "path", "version");
        RegistryRef target = access.registry(registry, Role.MEMBER);
        lock(target, collection);
        unlink(target, find(target, collection, selector));
    }

    private void unlink(RegistryRef target, RegistryLink link) {
        VersionView source = sourceView(link.versionId);
        ObjectNode payload = ArtifactViews.payload(source, source.version());
        linkPayload(payload, source, target.registry(), link.collectionName, link.linkIndex);
        RegistryLink.deleteById(link.id);
        if (newest(target, link.collectionName) == null) {
            RegistryStatements.removeCollectionTags(em, target.registryId(), link.collectionName);
        }
        Caller caller = access.caller();
        events.record(EventType.UNLINK_ARTIFACT, new Scope(source.projectId(), target.registryId()), caller.userId(),
                caller.username(), payload);
    }

    /** A linked version as its project shows it (the registry's members read it whatever their project rights). */
    private VersionView sourceView(long versionId) {
        ArtifactVersion version = ArtifactVersion.findById(versionId);
        ArtifactCollection collection = ArtifactCollection.findById(version.collectionId);
        Project project = Project.findById(collection.projectId);
        PlatformEntity owner = PlatformEntity.findById(project.entityId);
        return versions.view(new ProjectRef(0, owner.name, project.id, project.name, Role.VIEWER), versionId, false);
    }

    /** The variables of a link's events: the registry collection, its name for the version and the source's. */
    private static void linkPayload(ObjectNode payload, VersionView source, String registry, String collection,
            int index) {
        payload.put("artifact_collection_name", collection);
        payload.put("source_collection_name", source.collection());
        payload.put("registry_name", registry);
        payload.put("registry_version_index", index);
        payload.put("registry_version_string", registry + "/" + collection + ":v" + index);
    }

    /** The newest link of a registry collection: the project, entity and type of its version. */
    record Newest(long projectId, String entity, String project, String type) {
    }

    /** The newest link of the registry collection; 404 when it has none. */
    Newest newestLink(RegistryRef registry, String collection) {
        return RegistryStatements.newestLink(em, registry.registryId(), collection).orElseThrow(
                () -> ApiException.notFound("No collection " + collection + " in registry " + registry.registry()));
    }

    /** Serializes the writers of one registry collection, across replicas. */
    void lock(RegistryRef registry, String collection) {
        AdvisoryLocks.lock(em, AdvisoryLocks.REGISTRY_LINKS, registry.registryId() + "/" + collection);
    }

    private static LinkView linkView(RegistryRef registry, RegistryLink link, String source) {
        return new LinkView(registry.registry(), link.collectionName, link.linkIndex, source,
                ArtifactViews.username(link.createdBy), link.createdAt);
    }

    private Integer newest(RegistryRef registry, String collection) {
        return em.createQuery("""
                select max(l.linkIndex) from RegistryLink l
                where l.registryId = :registry and l.collectionName = :collection""", Integer.class)
                .setParameter("registry", registry.registryId()).setParameter("collection", collection)
                .getSingleResult();
    }

    /**
     * The registry's collections (those with a link), by name, with the type of the project collection of the newest
     * link and their tags; readable by registry members.
     */
    @Transactional
    public RegistryCollectionList listCollections(String registry, String type) {
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        return new RegistryCollectionList().collections(
                collections(ref, null).stream().filter(c -> type == null || type.equals(c.getType())).toList());
    }

    /** One collection of the registry as listed; 404 when it has no link. */
    RegistryCollection collection(RegistryRef ref, String name) {
        List<RegistryCollection> found = collections(ref, name);
        if (found.isEmpty()) {
            throw ApiException.notFound("No collection " + name + " in registry " + ref.registry());
        }
        return found.get(0);
    }

    /** The registry's collections, or the one named {@code name}. */
    private List<RegistryCollection> collections(RegistryRef ref, String name) {
        List<Object[]> rows = em.createQuery("""
                select l.collectionName, c.type, (select count(n) from RegistryLink n
                    where n.registryId = l.registryId and n.collectionName = l.collectionName), l.createdAt
                from RegistryLink l, ArtifactVersion v, ArtifactCollection c
                where l.registryId = :registry and v.id = l.versionId and c.id = v.collectionId
                and (:name is null or l.collectionName = :name)
                and l.linkIndex = (select max(m.linkIndex) from RegistryLink m
                    where m.registryId = l.registryId and m.collectionName = l.collectionName)
                order by l.collectionName""", Object[].class).setParameter("registry", ref.registryId())
                .setParameter("name", name).getResultList();
        Map<String, List<String>> tags = RegistryStatements.collectionTags(em, ref.registryId(), name);
        List<RegistryCollection> collections = new ArrayList<>();
        for (Object[] row : rows) {
            collections.add(new RegistryCollection().registry(ref.registry()).name((String) row[0])
                    .type((String) row[1]).versionCount(((Number) row[2]).intValue())
                    .latestLinkedAt((OffsetDateTime) row[3]).tags(tags.getOrDefault((String) row[0], List.of())));
        }
        return collections;
    }

    /** When the oldest link of a registry collection was made; readable by registry members (404: no such links). */
    @Transactional
    public OffsetDateTime firstLinkedAt(String registry, String collection) {
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        OffsetDateTime first = em.createQuery("""
                select min(l.createdAt) from RegistryLink l
                where l.registryId = :registry and l.collectionName = :collection""", OffsetDateTime.class)
                .setParameter("registry", ref.registryId()).setParameter("collection", collection).getSingleResult();
        if (first == null) {
            throw ApiException.notFound("No collection " + collection + " in registry " + registry);
        }
        return first;
    }

    /** Versions linked into a registry collection, newest link first; readable by registry members. */
    @Transactional
    public Page listLinked(String registry, String collection, Integer limit, Integer offset) {
        int size = QueryParams.limit(limit, ArtifactViews.DEFAULT_PAGE, 1, ArtifactViews.MAX_PAGE);
        int skip = QueryParams.offset(offset);
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        List<RegistryLink> links = RegistryLink.<RegistryLink> find("registryId = ?1 and collectionName = ?2",
                Sort.descending("linkIndex"), ref.registryId(), collection).range(skip, skip + size).list();
        if (links.isEmpty() && skip == 0) {
            throw ApiException.notFound("No collection " + collection + " in registry " + registry);
        }
        return ArtifactViews.page(linkedViews(ref, collection, links, false), size, skip);
    }

    /** A linked version: {@code v<N>} of the registry collection, {@code latest} or an alias of the collection. */
    @Transactional
    public VersionView getLinked(String registry, String collection, String version) {
        Selector selector = Selector.parse(version, "path", "version");
        RegistryRef ref = access.registry(registry, Role.VIEWER);
        return linkedView(ref, collection, find(ref, collection, selector));
    }

    @Transactional
    public FileView linkedFile(String registry, String collection, String version, String path) {
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        return ArtifactVersions.fileOf(getLinked(registry, collection, version), path);
    }

    /** The link a selector names in a registry collection: {@code v<N>}, {@code latest} or an alias. */
    RegistryLink find(RegistryRef registry, String collection, Selector selector) {
        RegistryLink found;
        if (selector.index() != null) {
            found = RegistryLink.<RegistryLink> find("registryId = ?1 and collectionName = ?2 and linkIndex = ?3",
                    registry.registryId(), collection, selector.index()).firstResult();
        } else if (ArtifactViews.LATEST.equals(selector.alias())) {
            found = RegistryLink.<RegistryLink> find("registryId = ?1 and collectionName = ?2",
                    Sort.descending("linkIndex"), registry.registryId(), collection).firstResult();
        } else {
            found = em
                    .createQuery("""
                            select l from RegistryLink l, RegistryLinkAlias a where a.linkId = l.id
                            and a.registryId = :registry and a.collectionName = :collection and a.alias = :alias""",
                            RegistryLink.class)
                    .setParameter("registry", registry.registryId()).setParameter("collection", collection)
                    .setParameter("alias", selector.alias()).getResultStream().findFirst().orElse(null);
        }
        if (found == null) {
            throw ApiException.notFound(
                    "No version " + selector + " in collection " + collection + " of registry " + registry.registry());
        }
        return found;
    }

    VersionView linkedView(RegistryRef registry, String collection, RegistryLink link) {
        return linkedViews(registry, collection, List.of(link), true).get(0);
    }

    /** Linked versions as their registry collection shows them: its index, aliases and tags; the source's content. */
    private List<VersionView> linkedViews(RegistryRef registry, String collection, List<RegistryLink> links,
            boolean withFiles) {
        if (links.isEmpty()) {
            return List.of();
        }
        Integer newest = newest(registry, collection);
        List<Long> ids = links.stream().map(l -> l.id).toList();
        Map<Long, List<String>> aliases = versions.named(
                "select new dev.fulcrum.artifacts.ArtifactViews$Named(a.linkId, a.alias) from RegistryLinkAlias a"
                        + " where a.linkId in :ids order by a.alias",
                ids);
        Map<Long, List<String>> tags = versions
                .named("select new dev.fulcrum.artifacts.ArtifactViews$Named(t.linkId, t.tag) from RegistryLinkTag t"
                        + " where t.linkId in :ids order by t.tag", ids);
        List<VersionView> views = new ArrayList<>(links.size());
        for (RegistryLink link : links) {
            ArtifactVersion version = ArtifactVersion.findById(link.versionId);
            ArtifactCollection sourceCollection = ArtifactCollection.findById(version.collectionId);
            Project project = Project.findById(sourceCollection.projectId);
            PlatformEntity owner = PlatformEntity.findById(project.entityId);
            VersionView source = versions.views(new ProjectRef(0, owner.name, project.id, project.name, Role.VIEWER),
                    List.of(version), withFiles).get(0);
            List<String> linkAliases = new ArrayList<>(aliases.getOrDefault(link.id, List.of()));
            if (newest != null && link.linkIndex == newest) {
                linkAliases.add(ArtifactViews.LATEST);
                linkAliases.sort(Comparator.naturalOrder());
            }
            views.add(new VersionView(source.id(), source.collectionId(), source.projectId(), source.entity(),
                    source.project(), collection, source.type(), link.linkIndex, source.digest(), source.description(),
                    source.metadata(), source.size(), source.fileCount(), linkAliases,
                    tags.getOrDefault(link.id, List.of()), source.createdBy(), source.createdAt(), source.files(),
                    registry.registry(), source.reference()));
        }
        return views;
    }

    /** An event about a linked version, scoped to the registry and the project of the version. */
    void recordLinked(EventType type, RegistryRef registry, VersionView linked, String name, String field,
            String value) {
        ObjectNode payload = ArtifactViews.payload(linked, name);
        payload.put(field, value);
        payload.put("registry_name", registry.registry());
        payload.put("artifact_version_string", registry.registry() + "/" + linked.collection() + ":" + name);
        Caller caller = access.caller();
        events.record(type, new Scope(linked.projectId(), registry.registryId()), caller.userId(), caller.username(),
                payload);
    }
}

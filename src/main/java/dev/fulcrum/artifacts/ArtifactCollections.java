package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactViews.CollectionView;
import dev.fulcrum.platform.errors.ApiException;

/** Artifact collections of a project: created explicitly or by the first upload that names a type. */
@ApplicationScoped
public class ArtifactCollections {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    CollectionTags tags;

    /** A collection as listed: its version count and creator's name read in the same query. */
    record Listed(long id, String name, String type, String description, String createdBy, OffsetDateTime createdAt,
            long versionCount) {
    }

    private static final String LISTED = """
            select new dev.fulcrum.artifacts.ArtifactCollections$Listed(c.id, c.name, c.type, c.description,
            u.username, c.createdAt, (select count(v) from ArtifactVersion v where v.collectionId = c.id))
            from ArtifactCollection c left join User u on u.id = c.createdBy
            where c.projectId = :project""";

    @Transactional
    public CollectionView createCollection(String entity, String project, String name, String type,
            String description) {
        ProjectRef ref = access.writableProject(entity, project);
        if (!ArtifactStatements.insertCollection(em, ref.projectId(), name, type, description,
                access.caller().userId())) {
            throw ApiException.conflict("Collection " + name + " exists in " + entity + "/" + project);
        }
        return collection(ref, name);
    }

    @Transactional
    public List<CollectionView> listCollections(String entity, String project, String type) {
        ProjectRef ref = access.readableProject(entity, project);
        return views(em.createQuery(LISTED + " and (:type is null or c.type = :type) order by c.name", Listed.class)
                .setParameter("project", ref.projectId()).setParameter("type", type).getResultList(), ref);
    }

    /** A page of a project's collections (of one type, when given), newest first, and how many there are in all. */
    public record CollectionPage(List<CollectionView> collections, long total) {
    }

    @Transactional
    public CollectionPage pageCollections(String entity, String project, String type, int size, int skip) {
        ProjectRef ref = access.readableProject(entity, project);
        List<CollectionView> page = views(
                em.createQuery(LISTED + " and (:type is null or c.type = :type) order by c.id desc", Listed.class)
                        .setParameter("project", ref.projectId()).setParameter("type", type).setFirstResult(skip)
                        .setMaxResults(size).getResultList(),
                ref);
        long total = em.createQuery("""
                select count(c) from ArtifactCollection c
                where c.projectId = :project and (:type is null or c.type = :type)""", Long.class)
                .setParameter("project", ref.projectId()).setParameter("type", type).getSingleResult();
        return new CollectionPage(page, total);
    }

    /** An artifact type of a project: a type of its collections, and when its first collection was made. */
    public record TypeView(String name, OffsetDateTime createdAt) {
    }

    /** The types of a project's collections, in the order they first appeared; {@code name}: that type only. */
    @Transactional
    public List<TypeView> types(String entity, String project, String name, int size, int skip) {
        ProjectRef ref = access.readableProject(entity, project);
        return em.createQuery("""
                select new dev.fulcrum.artifacts.ArtifactCollections$TypeView(c.type, min(c.createdAt))
                from ArtifactCollection c where c.projectId = :project and (:name is null or c.type = :name)
                group by c.type order by min(c.createdAt), c.type""", TypeView.class)
                .setParameter("project", ref.projectId()).setParameter("name", name).setFirstResult(skip)
                .setMaxResults(size).getResultList();
    }

    @Transactional
    public CollectionView getCollection(String entity, String project, String name) {
        return collection(access.readableProject(entity, project), name);
    }

    /** Changes the description of the project's collection (its writers: the project's members). */
    @Transactional
    public CollectionView describe(String entity, String project, String name, String description) {
        ArtifactNames.description(description, "body", "description");
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        require(ref, name).description = description;
        return collection(ref, name);
    }

    @Transactional
    public void deleteCollection(String entity, String project, String name) {
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        if (ArtifactCollection.delete("projectId = ?1 and name = ?2", ref.projectId(), name) == 0) {
            throw notFound(ref, name);
        }
    }

    CollectionView collection(ProjectRef ref, String name) {
        List<CollectionView> found = views(em.createQuery(LISTED + " and c.name = :name", Listed.class)
                .setParameter("project", ref.projectId()).setParameter("name", name).getResultList(), ref);
        if (found.isEmpty()) {
            throw notFound(ref, name);
        }
        return found.get(0);
    }

    /** The collection of the project; 404 if there is none. */
    ArtifactCollection require(ProjectRef ref, String name) {
        ArtifactCollection found = ArtifactCollection.find("projectId = ?1 and name = ?2", ref.projectId(), name)
                .firstResult();
        if (found == null) {
            throw notFound(ref, name);
        }
        return found;
    }

    /** The collection, its row locked for the rest of the transaction (writers of one collection go one by one). */
    ArtifactCollection lock(long projectId, String name) {
        return ArtifactCollection.<ArtifactCollection> find("projectId = ?1 and name = ?2", projectId, name)
                .withLock(LockModeType.PESSIMISTIC_WRITE).firstResult();
    }

    /** The collection, locked, created with that type if it does not exist yet. */
    ArtifactCollection lockOrCreate(long projectId, String name, String type) {
        ArtifactCollection found = lock(projectId, name);
        if (found != null) {
            return found;
        }
        ArtifactStatements.insertCollection(em, projectId, name, type, null, access.caller().userId());
        return lock(projectId, name);
    }

    /** Whether the project (which may not exist) of the entity has the collection. */
    @Transactional
    boolean exists(long entityId, String project, String name) {
        return em
                .createQuery("""
                        select count(c) from ArtifactCollection c, Project p
                        where p.id = c.projectId and p.entityId = :entity and p.name = :project and c.name = :name""",
                        Long.class)
                .setParameter("entity", entityId).setParameter("project", project).setParameter("name", name)
                .getSingleResult() > 0;
    }

    static ApiException notFound(ProjectRef ref, String name) {
        return ApiException.notFound("Collection " + name + " not found in " + ref.entity() + "/" + ref.project());
    }

    /** The collections as listed, with their tags (read for all of them in one statement). */
    private List<CollectionView> views(List<Listed> listed, ProjectRef ref) {
        Map<Long, List<String>> tagged = tags.of(listed.stream().map(Listed::id).toList());
        return listed.stream()
                .map(l -> new CollectionView(l.id(), l.name(), l.type(), l.description(), ref.entity(), ref.project(),
                        (int) l.versionCount(), l.createdBy(), l.createdAt(), tagged.getOrDefault(l.id(), List.of())))
                .toList();
    }
}

package dev.fulcrum.artifacts;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.artifacts.ArtifactNames.Reference;
import dev.fulcrum.artifacts.ArtifactNames.Selector;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.Named;
import dev.fulcrum.artifacts.ArtifactViews.Page;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.StoredJson;

/**
 * Versions of artifact collections as they are read: by id, reference, selector or page, with their labels and files,
 * each read checked against the caller's rights on the project. {@link VersionWrites} creates, changes and deletes
 * them.
 */
@ApplicationScoped
public class ArtifactVersions {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    ArtifactCollections collections;

    /** A version by its id, when the caller may read its project; 404 otherwise (as for an unknown id). */
    @Transactional
    public VersionView byId(long versionId, boolean withFiles) {
        ArtifactVersion version = ArtifactVersion.findById(versionId);
        if (version == null) {
            throw ApiException.notFound("No artifact version " + versionId);
        }
        ArtifactCollection collection = ArtifactCollection.findById(version.collectionId);
        String[] names = ArtifactStatements.projectNames(em, collection.projectId);
        ProjectRef ref;
        try {
            ref = access.readableProject(names[0], names[1]);
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.FORBIDDEN) {
                throw ApiException.notFound("No artifact version " + versionId);
            }
            throw e;
        }
        return view(ref, versionId, withFiles);
    }

    /**
     * The sizes of versions (the bytes of their files), by id; an id of no version is left out. Checks no rights: for a
     * caller that checked them on what holds the versions.
     */
    @Transactional
    public Map<Long, Long> sizes(Collection<Long> versionIds) {
        Map<Long, Long> sizes = new HashMap<>();
        if (!versionIds.isEmpty()) {
            em.createQuery("select v.id, v.size from ArtifactVersion v where v.id in :ids", Object[].class)
                    .setParameter("ids", versionIds).getResultList()
                    .forEach(row -> sizes.put((Long) row[0], (Long) row[1]));
        }
        return sizes;
    }

    /** The newest version of a collection, or null when it has none (or there is no such collection). */
    @Transactional
    public VersionView newest(ProjectRef ref, String collection) {
        ArtifactCollection found = ArtifactCollection
                .<ArtifactCollection> find("projectId = ?1 and name = ?2", ref.projectId(), collection).firstResult();
        if (found == null) {
            return null;
        }
        ArtifactVersion newest = ArtifactVersion
                .<ArtifactVersion> find("collectionId", Sort.descending("versionIndex"), found.id).firstResult();
        return newest == null ? null : view(ref, newest.id, false);
    }

    @Transactional
    public Page listVersions(String entity, String project, String collection, Integer limit, Integer offset) {
        return listVersions(entity, project, collection, limit, offset, false);
    }

    /** A page of the collection's versions, newest first or ({@code oldestFirst}) oldest first. */
    @Transactional
    public Page listVersions(String entity, String project, String collection, Integer limit, Integer offset,
            boolean oldestFirst) {
        int size = QueryParams.limit(limit, ArtifactViews.DEFAULT_PAGE, 1, ArtifactViews.MAX_PAGE);
        int skip = QueryParams.offset(offset);
        ProjectRef ref = access.readableProject(entity, project);
        long collectionId = collections.require(ref, collection).id;
        List<ArtifactVersion> page = ArtifactVersion
                .<ArtifactVersion> find("collectionId",
                        oldestFirst ? Sort.ascending("versionIndex") : Sort.descending("versionIndex"), collectionId)
                .range(skip, skip + size).list();
        return ArtifactViews.page(views(ref, page, false), size, skip);
    }

    @Transactional
    public VersionView getVersion(String entity, String project, String collection, String version) {
        Selector selector = Selector.parse(version, "path", "version");
        ProjectRef ref = access.readableProject(entity, project);
        return view(ref, find(ref, collection, selector), true);
    }

    /** The id of a collection's version {@code v<N>} or alias, for the caller who may read the project. */
    @Transactional
    public long versionId(String entity, String project, String collection, String version) {
        Selector selector = Selector.parse(version, "path", "version");
        return find(access.readableProject(entity, project), collection, selector);
    }

    @Transactional
    public VersionView resolve(String reference) {
        Reference ref = Reference.parse(reference, "query", "ref");
        if (!Names.isEntity(ref.entity()) || !Names.isProject(ref.project())) {
            throw ApiException.notFound("No artifact " + reference);
        }
        ProjectRef project = access.readableProject(ref.entity(), ref.project());
        return view(project, find(project, ref.collection(), ref.selector()), true);
    }

    /**
     * The files of a version by its id, by path, without an access check: for a signed URL, whose signature stands for
     * the caller's rights; {@code path} null for all of them.
     */
    @Transactional
    public List<FileView> signedFiles(long versionId, String path) {
        return ArtifactStatements.versionFiles(em, versionId, path);
    }

    /** A file of a version, for download. */
    @Transactional
    public FileView file(String entity, String project, String collection, String version, String path) {
        Selector selector = Selector.parse(version, "path", "version");
        if (path == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "path"));
        }
        ProjectRef ref = access.readableProject(entity, project);
        return fileOf(view(ref, find(ref, collection, selector), true), path);
    }

    static FileView fileOf(VersionView version, String path) {
        return version.files().stream().filter(f -> f.path().equals(path)).findFirst()
                .orElseThrow(() -> ApiException.notFound("No file " + path + " in " + version.reference()));
    }

    /** The id of the version a selector names in a collection of the project: {@code v<N>} or an alias. */
    long find(ProjectRef ref, String collection, Selector selector) {
        return find(ref, collections.require(ref, collection).id, collection, selector);
    }

    /** The id of the selected version of a collection already read (its id and name). */
    long find(ProjectRef ref, long collectionId, String collection, Selector selector) {
        List<Long> found = selector.index() != null ? em.createQuery("""
                select v.id from ArtifactVersion v
                where v.collectionId = :collection and v.versionIndex = :index""", Long.class)
                .setParameter("collection", collectionId).setParameter("index", selector.index()).getResultList()
                : em.createQuery("""
                        select a.versionId from ArtifactAlias a
                        where a.collectionId = :collection and a.alias = :alias""", Long.class)
                        .setParameter("collection", collectionId).setParameter("alias", selector.alias())
                        .getResultList();
        if (found.isEmpty()) {
            throw ApiException.notFound(
                    "No version " + selector + " of " + ref.entity() + "/" + ref.project() + "/" + collection);
        }
        return found.get(0);
    }

    VersionView view(ProjectRef ref, long versionId, boolean withFiles) {
        return ArtifactStatements.versionView(em, storedJson, ref, versionId, withFiles);
    }

    /** The versions with their collection, aliases and tags (read for all at once) and, if asked, their files. */
    List<VersionView> views(ProjectRef ref, List<ArtifactVersion> versions, boolean withFiles) {
        if (versions.isEmpty()) {
            return List.of();
        }
        List<Long> ids = versions.stream().map(v -> v.id).toList();
        Map<Long, List<String>> aliases = named(
                "select new dev.fulcrum.artifacts.ArtifactViews$Named(a.versionId, a.alias) from ArtifactAlias a"
                        + " where a.versionId in :ids order by a.alias",
                ids);
        Map<Long, List<String>> tags = named(
                "select new dev.fulcrum.artifacts.ArtifactViews$Named(t.versionId, t.tag) from ArtifactTag t"
                        + " where t.versionId in :ids order by t.tag",
                ids);
        List<VersionView> views = new ArrayList<>(versions.size());
        for (ArtifactVersion v : versions) {
            ArtifactCollection collection = ArtifactCollection.findById(v.collectionId);
            List<FileView> files = withFiles
                    ? ArtifactFile.<ArtifactFile> find("versionId", Sort.by("path"), v.id).stream()
                            .map(f -> new FileView(f.path, f.size, f.digest, f.contentType)).toList()
                    : null;
            views.add(new VersionView(v.id, v.collectionId, ref.projectId(), ref.entity(), ref.project(),
                    collection.name, collection.type, v.versionIndex, v.digest, v.description,
                    storedJson.readObject(v.metadata), v.size, v.fileCount, aliases.getOrDefault(v.id, List.of()),
                    tags.getOrDefault(v.id, List.of()), ArtifactViews.username(v.createdBy), v.createdAt, files, null,
                    null));
        }
        return views;
    }

    /** Labels by owner, in the order of the query. */
    Map<Long, List<String>> named(String query, List<Long> owners) {
        return em.createQuery(query, Named.class).setParameter("ids", owners).getResultStream()
                .collect(Collectors.groupingBy(Named::owner, Collectors.mapping(Named::name, Collectors.toList())));
    }
}

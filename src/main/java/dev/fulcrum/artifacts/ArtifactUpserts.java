package dev.fulcrum.artifacts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The artifact writes that race: native SQL because PostgreSQL's {@code insert ... on conflict} settles a concurrent
 * writer of the same collection, alias or tag in one statement (no read-then-insert race, no failed transaction).
 */
@ApplicationScoped
class ArtifactUpserts {

    @Inject
    EntityManager em;

    /** Creates the collection; false if the project has one of that name. */
    boolean insertCollection(long projectId, String name, String type, String description, long createdBy) {
        return NativeSql.update(em, """
                insert into artifact_collections (project_id, name, type, description, created_by)
                values (?1, ?2, ?3, ?4, ?5) on conflict (project_id, name) do nothing""", projectId, name, type,
                NativeSql.typed(description, String.class), createdBy) == 1;
    }

    /** Points the alias of the collection at the version; false if it did already. */
    boolean setAlias(long collectionId, String alias, long versionId) {
        return NativeSql.update(em, """
                insert into artifact_aliases (collection_id, alias, version_id) values (?1, ?2, ?3)
                on conflict (collection_id, alias) do update set version_id = excluded.version_id,
                created_at = now() where artifact_aliases.version_id <> excluded.version_id""", collectionId, alias,
                versionId) == 1;
    }

    /** Gives {@code latest} to the highest version of the collection, unless a version holds it. */
    void restoreLatest(long collectionId) {
        NativeSql.update(em, """
                insert into artifact_aliases (collection_id, alias, version_id)
                select collection_id, ?1, id from artifact_versions where collection_id = ?2
                order by version_index desc limit 1 on conflict (collection_id, alias) do nothing""",
                ArtifactViews.LATEST, collectionId);
    }

    /** Tags the version; false if it was. */
    boolean addTag(long versionId, String tag) {
        return NativeSql.update(em,
                "insert into artifact_tags (version_id, tag) values (?1, ?2) on conflict do nothing", versionId,
                tag) == 1;
    }

    /** Points the alias of the registry collection at the link; false if it did already. */
    boolean setLinkAlias(long registryId, String collection, String alias, long linkId) {
        return NativeSql.update(em, """
                insert into registry_link_aliases (registry_id, collection_name, alias, link_id) values (?1, ?2, ?3, ?4)
                on conflict (registry_id, collection_name, alias) do update set link_id = excluded.link_id,
                created_at = now() where registry_link_aliases.link_id <> excluded.link_id""", registryId, collection,
                alias, linkId) == 1;
    }

    /** Tags the link; false if it was. */
    boolean addLinkTag(long linkId, String tag) {
        return NativeSql.update(em,
                "insert into registry_link_tags (link_id, tag) values (?1, ?2) on conflict do nothing", linkId,
                tag) == 1;
    }
}

package dev.fulcrum.artifacts;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jakarta.persistence.EntityManager;

import dev.fulcrum.artifacts.RegistryLinks.Newest;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The SQL of registry collections (tables {@code registry_links}, {@code registry_link_aliases},
 * {@code registry_link_tags}, {@code registry_collection_tags}); {@link RegistryLinks}, {@link ArtifactLabels} and
 * {@link CollectionTags} call it with their entity manager, in their transactions. The label writes are upserts, as in
 * {@link ArtifactStatements}: a concurrent writer of the same alias or tag is settled in one statement.
 */
final class RegistryStatements {

    private RegistryStatements() {
    }

    /** Points the alias of the registry collection at the link; false if it did already. */
    static boolean setLinkAlias(EntityManager em, long registryId, String collection, String alias, long linkId) {
        return NativeSql.update(em, """
                insert into registry_link_aliases (registry_id, collection_name, alias, link_id) values (?1, ?2, ?3, ?4)
                on conflict (registry_id, collection_name, alias) do update set link_id = excluded.link_id,
                created_at = now() where registry_link_aliases.link_id <> excluded.link_id""", registryId, collection,
                alias, linkId) == 1;
    }

    /** Tags the link; false if it was. */
    static boolean addLinkTag(EntityManager em, long linkId, String tag) {
        return NativeSql.update(em,
                "insert into registry_link_tags (link_id, tag) values (?1, ?2) on conflict do nothing", linkId,
                tag) == 1;
    }

    /** Tags the registry collection; false if it was. */
    static boolean addCollectionTag(EntityManager em, long registryId, String collection, String tag) {
        return NativeSql.update(em, """
                insert into registry_collection_tags (registry_id, collection_name, tag) values (?1, ?2, ?3)
                on conflict do nothing""", registryId, collection, tag) == 1;
    }

    /** Takes the tag from the registry collection; false if it did not have it. */
    static boolean removeCollectionTag(EntityManager em, long registryId, String collection, String tag) {
        return NativeSql.update(em, """
                delete from registry_collection_tags
                where registry_id = ?1 and collection_name = ?2 and tag = ?3""", registryId, collection, tag) == 1;
    }

    /** Takes all tags from the registry collection (it lost its last link). */
    static void removeCollectionTags(EntityManager em, long registryId, String collection) {
        NativeSql.update(em, "delete from registry_collection_tags where registry_id = ?1 and collection_name = ?2",
                registryId, collection);
    }

    /** The tags of the registry's collections, or of the one named {@code name}, by collection name, sorted. */
    static Map<String, List<String>> collectionTags(EntityManager em, long registryId, String name) {
        Map<String, List<String>> tags = new HashMap<>();
        NativeSql
                .list(em, """
                        select collection_name, tag from registry_collection_tags
                        where registry_id = ?1 and (cast(?2 as text) is null or collection_name = ?2) order by tag""",
                        row -> Map.entry(row.string(0), row.string(1)), registryId, NativeSql.typed(name, String.class))
                .forEach(e -> tags.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
        return tags;
    }

    /** The newest link of the registry collection: the project, entity and type of its version. */
    static Optional<Newest> newestLink(EntityManager em, long registryId, String collection) {
        return NativeSql.first(em, """
                select c.project_id, e.name, p.name, c.type
                from registry_links l join artifact_versions v on v.id = l.version_id
                join artifact_collections c on c.id = v.collection_id
                join project_names p on p.project_id = c.project_id
                join entity_names e on e.entity_id = p.entity_id
                where l.registry_id = ?1 and l.collection_name = ?2 order by l.link_index desc limit 1""",
                row -> new Newest(row.longValue(0), row.string(1), row.string(2), row.string(3)), registryId,
                collection);
    }
}

package dev.fulcrum.artifacts;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The SQL of a project's artifacts (tables {@code artifact_collections}, {@code artifact_versions},
 * {@code artifact_aliases}, {@code artifact_tags}, {@code artifact_files}, {@code artifact_collection_tags}); the
 * services call it with their entity manager, in their transactions.
 * <p>
 * The one artifact read in native SQL: a version with its collection, creator, aliases, tags and files in one statement
 * (the ORM needs five). It is on the path of every label change, whose answer and event payload it is, and is measured
 * by bench/webhooks.sh.
 * <p>
 * The artifact writes that race: native SQL because PostgreSQL's {@code insert ... on conflict} settles a concurrent
 * writer of the same collection, alias or tag in one statement (no read-then-insert race, no failed transaction).
 */
final class ArtifactStatements {

    private static final String VERSION_VIEW = """
            select v.collection_id, c.name, c.type, v.version_index, v.digest, v.description,
                   cast(v.metadata as text), v.size, v.file_count, u.username, v.created_at,
                   cast(json_build_object(
                       'aliases', array(select a.alias from artifact_aliases a where a.version_id = v.id order by a.alias),
                       'tags', array(select t.tag from artifact_tags t where t.version_id = v.id order by t.tag),
                       'files', case when ?2 then coalesce((select json_agg(json_build_array(f.path, f.size, f.digest,
                                f.content_type) order by f.path) from artifact_files f where f.version_id = v.id),
                                cast('[]' as json)) end) as text)
            from artifact_versions v join artifact_collections c on c.id = v.collection_id
            left join account_names u on u.user_id = v.created_by
            where v.id = ?1""";

    private ArtifactStatements() {
    }

    /** Version {@code versionId} of the project {@code ref} as the API shows it; its files only if asked. */
    static VersionView versionView(EntityManager em, StoredJson storedJson, ProjectRef ref, long versionId,
            boolean withFiles) {
        return NativeSql.first(em, VERSION_VIEW, row -> {
            JsonNode labels = storedJson.readObject(row.string(11));
            return new VersionView(versionId, row.longValue(0), ref.projectId(), ref.entity(), ref.project(),
                    row.string(1), row.string(2), row.intValue(3), row.string(4), row.string(5),
                    storedJson.readObject(row.string(6)), row.longValue(7), row.intValue(8),
                    strings(labels.get("aliases")), strings(labels.get("tags")), row.string(9), row.time(10),
                    withFiles ? files(labels.get("files")) : null, null, null);
        }, versionId, withFiles).orElseThrow();
    }

    /** The entity and project names of a project. */
    static String[] projectNames(EntityManager em, long projectId) {
        return NativeSql.first(em, """
                select e.name, p.name from project_names p join entity_names e on e.entity_id = p.entity_id
                where p.project_id = ?1""", row -> new String[] { row.string(0), row.string(1) }, projectId)
                .orElseThrow();
    }

    /** The files of a version by path ({@code path} null for all of them). */
    static List<FileView> versionFiles(EntityManager em, long versionId, String path) {
        return NativeSql.list(em,
                "select path, size, digest, content_type from artifact_files where version_id = ?1"
                        + (path == null ? "" : " and path = ?2") + " order by path",
                row -> new FileView(row.string(0), row.longValue(1), row.string(2), row.string(3)),
                path == null ? new Object[] { versionId } : new Object[] { versionId, path });
    }

    // labels and collections (upserts) -------------------------------------------------------------------------------

    /** Creates the collection; false if the project has one of that name. */
    static boolean insertCollection(EntityManager em, long projectId, String name, String type, String description,
            long createdBy) {
        return NativeSql.update(em, """
                insert into artifact_collections (project_id, name, type, description, created_by)
                values (?1, ?2, ?3, ?4, ?5) on conflict (project_id, name) do nothing""", projectId, name, type,
                NativeSql.typed(description, String.class), createdBy) == 1;
    }

    /** Points the alias of the collection at the version; false if it did already. */
    static boolean setAlias(EntityManager em, long collectionId, String alias, long versionId) {
        return NativeSql.update(em, """
                insert into artifact_aliases (collection_id, alias, version_id) values (?1, ?2, ?3)
                on conflict (collection_id, alias) do update set version_id = excluded.version_id,
                created_at = now() where artifact_aliases.version_id <> excluded.version_id""", collectionId, alias,
                versionId) == 1;
    }

    /** Gives {@code latest} to the highest version of the collection, unless a version holds it. */
    static void restoreLatest(EntityManager em, long collectionId) {
        NativeSql.update(em, """
                insert into artifact_aliases (collection_id, alias, version_id)
                select collection_id, ?1, id from artifact_versions where collection_id = ?2
                order by version_index desc limit 1 on conflict (collection_id, alias) do nothing""",
                ArtifactViews.LATEST, collectionId);
    }

    /** Tags the version; false if it was. */
    static boolean addTag(EntityManager em, long versionId, String tag) {
        return NativeSql.update(em,
                "insert into artifact_tags (version_id, tag) values (?1, ?2) on conflict do nothing", versionId,
                tag) == 1;
    }

    // tags of collections --------------------------------------------------------------------------------------------

    /** Tags the collection; false if it was. */
    static boolean addCollectionTag(EntityManager em, long collectionId, String tag) {
        return NativeSql.update(em, """
                insert into artifact_collection_tags (collection_id, tag) values (?1, ?2)
                on conflict do nothing""", collectionId, tag) == 1;
    }

    /** Takes the tag from the collection; false if it did not have it. */
    static boolean removeCollectionTag(EntityManager em, long collectionId, String tag) {
        return NativeSql.update(em, "delete from artifact_collection_tags where collection_id = ?1 and tag = ?2",
                collectionId, tag) == 1;
    }

    /** The tags of project collections, by collection id, sorted. */
    static Map<Long, List<String>> collectionTags(EntityManager em, List<Long> collectionIds) {
        Map<Long, List<String>> tags = new HashMap<>();
        NativeSql
                .list(em, """
                        select collection_id, tag from artifact_collection_tags where collection_id = any(?1)
                        order by collection_id, tag""", row -> Map.entry(row.longValue(0), row.string(1)),
                        (Object) collectionIds.toArray(Long[]::new))
                .forEach(e -> tags.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
        return tags;
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>(array.size());
        array.forEach(value -> values.add(value.asText()));
        return values;
    }

    private static List<FileView> files(JsonNode array) {
        List<FileView> files = new ArrayList<>(array.size());
        array.forEach(f -> files.add(new FileView(f.get(0).asText(), f.get(1).asLong(), f.get(2).asText(),
                f.get(3).isNull() ? null : f.get(3).asText())));
        return files;
    }
}

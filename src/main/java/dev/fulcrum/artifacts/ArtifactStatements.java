package dev.fulcrum.artifacts;

import java.util.ArrayList;
import java.util.List;

import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The one artifact read in native SQL: a version with its collection, creator, aliases, tags and files in one statement
 * (the ORM needs five). It is on the path of every label change, whose answer and event payload it is, and is measured
 * by bench/webhooks.sh.
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

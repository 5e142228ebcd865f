package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.User;
import dev.fulcrum.artifacts.ArtifactNames.Reference;

/** What the artifact services answer, and the payload of their events. */
public final class ArtifactViews {

    static final String LATEST = "latest";
    public static final int DEFAULT_PAGE = 100;
    public static final int MAX_PAGE = 1000;

    private ArtifactViews() {
    }

    public record CollectionView(long id, String name, String type, String description, String entity, String project,
            int versionCount, String createdBy, OffsetDateTime createdAt, List<String> tags) {
    }

    public record FileView(String path, long size, String digest, String contentType) {
    }

    public record VersionView(long id, long collectionId, long projectId, String entity, String project,
            String collection, String type, int index, String digest, String description, ObjectNode metadata,
            long size, int fileCount, List<String> aliases, List<String> tags, String createdBy,
            OffsetDateTime createdAt, List<FileView> files, String registry, String source) {

        public String version() {
            return "v" + index;
        }

        public String reference() {
            return source != null ? source : Reference.of(entity, project, collection, index);
        }
    }

    public record LinkView(String registry, String collection, int index, String source, String createdBy,
            OffsetDateTime createdAt) {
    }

    public record Page(List<VersionView> versions, Integer nextOffset) {
    }

    /** A label (alias or tag) of a version or link, read for many at once. */
    record Named(long owner, String name) {
    }

    /** The name of a user who created something; null once the user is deleted. */
    static String username(Long userId) {
        User user = userId == null ? null : User.findById(userId);
        return user == null ? null : user.username;
    }

    /** A page of {@code size} from rows read with one more than the page: the extra one says there is a next page. */
    static Page page(List<VersionView> versions, int size, int skip) {
        if (versions.size() > size) {
            return new Page(new ArrayList<>(versions.subList(0, size)), skip + size);
        }
        return new Page(versions, null);
    }

    /** The artifact payload variables of an event about {@code version}, named {@code alias} in the string form. */
    static ObjectNode payload(VersionView version, String alias) {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("entity_name", version.entity());
        payload.put("project_name", version.project());
        payload.put("artifact_collection_name", version.collection());
        payload.put("artifact_type", version.type());
        payload.put("version_index", version.index());
        payload.put("version", version.version());
        payload.put("artifact_version", version.reference());
        payload.put("artifact_version_string",
                version.entity() + "/" + version.project() + "/" + version.collection() + ":" + alias);
        payload.set("artifact_metadata", version.metadata());
        return payload;
    }
}

package dev.fulcrum.wandb;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactViews.CollectionView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

/**
 * The artifact objects of {@code wandb.graphql} as the artifact fetchers pass them: versions and drafts, collections of
 * projects and of registries, memberships, aliases, tags and files.
 */
final class WandbArtifactNodes {

    private WandbArtifactNodes() {
    }

    /** A version (committed) or a draft (pending). */
    record ArtifactNode(String id, Draft draft, VersionView version) {

        static ArtifactNode of(VersionView version) {
            return new ArtifactNode(WandbArtifacts.versionId(version.id()), null, version);
        }

        static ArtifactNode of(Draft draft) {
            return new ArtifactNode(WandbArtifacts.draftId(draft.id()), draft, null);
        }

        String entity() {
            return version != null ? version.entity() : draft.entity();
        }

        String project() {
            return version != null ? version.project() : draft.project();
        }

        String collection() {
            return version != null ? version.collection() : draft.collection();
        }

        String type() {
            return version != null ? version.type() : draft.type();
        }
    }

    /**
     * A collection of a project, or ({@code registry} set) a collection of a registry; {@code view} is the project
     * collection as the artifacts store lists it, when it was read.
     */
    record CollectionNode(String id, String name, String entity, String project, String type, String registry,
            CollectionView view) {

        static CollectionNode of(String entity, String project, String name, String type) {
            return new CollectionNode(WandbNodes.opaque("ArtifactCollection", entity + "/" + project + "/" + name),
                    name, entity, project, type, null, null);
        }

        static CollectionNode of(CollectionView view) {
            CollectionNode node = of(view.entity(), view.project(), view.name(), view.type());
            return new CollectionNode(node.id(), node.name(), node.entity(), node.project(), node.type(), null, view);
        }

        static CollectionNode ofRegistry(String registry, String name, String type) {
            return new CollectionNode(WandbNodes.opaque("ArtifactCollection", "registry:" + registry + "/" + name),
                    name, WandbRegistries.ORG_ENTITY, WandbRegistries.PROJECT_PREFIX + registry, type, registry, null);
        }

        /** The collection an id names (its type not read: null), or null when the id is not a collection's. */
        static CollectionNode parse(String id) {
            String key;
            try {
                key = new String(Base64.getDecoder().decode(id), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return null;
            }
            String prefix = "ArtifactCollection:";
            String registry = "registry:";
            if (!key.startsWith(prefix)) {
                return null;
            }
            key = key.substring(prefix.length());
            if (key.startsWith(registry)) {
                String[] parts = key.substring(registry.length()).split("/", -1);
                return parts.length == 2 ? ofRegistry(parts[0], parts[1], null) : null;
            }
            String[] parts = key.split("/", -1);
            return parts.length == 3 ? of(parts[0], parts[1], parts[2], null) : null;
        }
    }

    /**
     * An artifact type of a project: a type of its collections, with when the first was made (null when read from a
     * version or a registry); {@code project} null when read from a version.
     */
    record TypeNode(String id, String name, ProjectNode project, OffsetDateTime createdAt) {

        static TypeNode of(String name, ProjectNode project, OffsetDateTime createdAt) {
            return new TypeNode(WandbNodes.opaque("ArtifactType", name), name, project, createdAt);
        }
    }

    record AliasNode(String id, String alias, CollectionNode artifactCollection) {
    }

    record TagNode(String id, String name) {
    }

    /**
     * A version as a member of a collection: its project collection (index and aliases are the version's) or a registry
     * collection it is linked into (index and aliases are the link's); {@code artifact} is the version.
     */
    record MembershipNode(String id, ArtifactNode artifact, CollectionNode collection, int index,
            List<String> aliases) {
    }

    record FileNode(String id, String name, String directUrl, String uploadUrl, List<String> uploadHeaders,
            String storagePath, Long sizeBytes, String md5, ArtifactNode artifact,
            Map<String, Object> uploadMultipartUrls) {

        FileNode(String id, String name, String directUrl, String uploadUrl, List<String> uploadHeaders,
                String storagePath, Long sizeBytes, String md5, ArtifactNode artifact) {
            this(id, name, directUrl, uploadUrl, uploadHeaders, storagePath, sizeBytes, md5, artifact, null);
        }
    }

    record ManifestNode(String id, FileNode file) {
    }

    /** The collection a version belongs to in its project. */
    static CollectionNode collectionOf(ArtifactNode node) {
        return CollectionNode.of(node.entity(), node.project(), node.collection(), node.type());
    }

    static List<AliasNode> aliasNodes(CollectionNode collection, List<String> aliases) {
        return aliases.stream()
                .map(alias -> new AliasNode(WandbNodes.opaque("ArtifactAlias", collection.id() + ":" + alias), alias,
                        collection))
                .toList();
    }
}

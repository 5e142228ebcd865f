package dev.fulcrum.wandb;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactCollections;
import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.RegistryLinks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbArtifactNodes.CollectionNode;
import dev.fulcrum.wandb.WandbArtifactNodes.MembershipNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

/**
 * Versions, collections and memberships as the artifact fields of {@code wandb.graphql} find them: through the
 * artifacts services, with their rights (what the caller may not read is null, as what does not exist).
 */
@ApplicationScoped
class WandbArtifactReads {

    static final String LATEST = "latest";

    @Inject
    Access access;

    @Inject
    WandbArtifacts artifacts;

    @Inject
    ArtifactVersions versions;

    @Inject
    ArtifactCollections collections;

    @Inject
    RegistryLinks links;

    @Inject
    WandbRegistries registries;

    /** A project the caller may read or a registry's project; null when there is none. */
    ProjectNode project(String entity, String name) {
        if (WandbRegistries.ORG_ENTITY.equals(entity)) {
            return registries.project(name);
        }
        return access.existingProject(entity, name, Role.VIEWER).map(ProjectNode::of).orElse(null);
    }

    /** A collection of the project or registry, or null when it has none of that name. */
    CollectionNode collection(ProjectNode project, String name) {
        if (project.registry() != null) {
            MembershipNode latest = linkedMembership(project.registry().registry(), name, LATEST);
            return latest == null ? null : latest.collection();
        }
        return collection(project.entityName(), project.name(), name);
    }

    /** A collection of the project, or null when it has none of that name. */
    CollectionNode collection(String entity, String project, String name) {
        try {
            return CollectionNode.of(collections.getCollection(entity, project, name));
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /** A version by {@code v<N>} or alias, as a member of its collection, or null when there is none. */
    MembershipNode membership(String entity, String project, String collection, String selector) {
        try {
            VersionView version = versions.getVersion(entity, project, collection, selector);
            ArtifactNode artifact = ArtifactNode.of(version);
            return new MembershipNode(WandbNodes.opaque("ArtifactCollectionMembership", Long.toString(version.id())),
                    artifact, WandbArtifactNodes.collectionOf(artifact), version.index(), version.aliases());
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /**
     * A version linked into a registry collection by {@code v<N>} of the collection, {@code latest} or an alias, or
     * null when there is none. Its artifact is the project version (the caller must be able to read its project).
     */
    MembershipNode linkedMembership(String registry, String collection, String selector) {
        try {
            VersionView linked = links.getLinked(registry, collection, selector);
            return new MembershipNode(
                    WandbNodes.opaque("ArtifactCollectionMembership",
                            "registry:" + registry + "/" + collection + ":v" + linked.index()),
                    ArtifactNode.of(versions.byId(linked.id(), false)),
                    CollectionNode.ofRegistry(registry, collection, linked.type()), linked.index(), linked.aliases());
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /** {@code collection:alias} or {@code collection:vN} ({@code collection} alone: {@code latest}). */
    MembershipNode membershipByName(ProjectNode project, String name) {
        int colon = name.lastIndexOf(':');
        String collection = colon < 0 ? name : name.substring(0, colon);
        String selector = colon < 0 ? LATEST : name.substring(colon + 1);
        return project.registry() != null ? linkedMembership(project.registry().registry(), collection, selector)
                : membership(project.entityName(), project.name(), collection, selector);
    }

    /** An artifact by id the caller may read; null when there is none (or it is not readable). */
    ArtifactNode readable(String id) {
        Long[] parsed;
        try {
            parsed = WandbArtifacts.parseArtifactId(id);
        } catch (ApiException e) {
            return null;
        }
        try {
            if (parsed[0] != null) {
                Draft draft = artifacts.draft(parsed[0]);
                access.readableProject(draft.entity(), draft.project());
                return draft.versionId() == null ? ArtifactNode.of(draft)
                        : ArtifactNode.of(versions.byId(draft.versionId(), false));
            }
            return ArtifactNode.of(versions.byId(parsed[1], false));
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /** An artifact by id the caller may read; 404 otherwise. */
    ArtifactNode require(String id) {
        ArtifactNode node = readable(id);
        if (node == null) {
            throw ApiException.notFound("No artifact " + id);
        }
        return node;
    }

    /** A committed version by id the caller may read; 404 otherwise, 409 for a draft not yet committed. */
    VersionView committed(String id) {
        ArtifactNode node = require(id);
        if (node.version() == null) {
            throw ApiException.conflict("Artifact " + node.id() + " is not committed");
        }
        return node.version();
    }
}

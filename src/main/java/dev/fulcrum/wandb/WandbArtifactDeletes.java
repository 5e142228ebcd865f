package dev.fulcrum.wandb;

import java.util.HashMap;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.RegistryLinks;
import dev.fulcrum.artifacts.VersionWrites;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbArtifactNodes.CollectionNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The SDK's {@code artifact.delete(delete_aliases=)} ({@code deleteArtifact}) and {@code artifact.unlink()}
 * ({@code unlinkArtifact}), through the artifacts services and their rules: deleting a version needs the member role on
 * its project and is refused while the version has aliases unless they are to go with it; unlinking needs the member
 * role on the registry. The blobs a deleted version alone used are left to the blob collector.
 */
@ApplicationScoped
class WandbArtifactDeletes {

    @Inject
    VersionWrites versionWrites;

    @Inject
    RegistryLinks links;

    @Inject
    WandbArtifactReads reads;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Mutation", type -> type.dataFetcher("deleteArtifact", this::deleteArtifact)
                .dataFetcher("unlinkArtifact", this::unlinkArtifact));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> input(DataFetchingEnvironment env) {
        return (Map<String, Object>) env.getArgument("input");
    }

    private Map<String, Object> deleteArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        VersionView version = reads.committed((String) input.get("artifactID"));
        VersionView deleted = versionWrites.deleteVersion(version.id(),
                Boolean.TRUE.equals(input.get("deleteAliases")));
        Map<String, Object> payload = new HashMap<>();
        payload.put("artifact", ArtifactNode.of(deleted));
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    /**
     * Removes the link of a version from a registry collection: {@code artifactPortfolioID} is the registry
     * collection's id (the linked artifact's {@code collection.id}); a project's collection is not a link (its version
     * is deleted with {@code deleteArtifact}).
     */
    private Map<String, Object> unlinkArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        CollectionNode collection = CollectionNode.parse((String) input.get("artifactPortfolioID"));
        if (collection == null) {
            throw ApiException.invalid(Violation.of("Not the id of an artifact collection", "value_error", "body",
                    "input", "artifactPortfolioID"));
        }
        if (collection.registry() == null) {
            throw ApiException.invalid(Violation.of(
                    "Only links into a registry's collection are removed by unlinkArtifact; a version of a project's"
                            + " collection is deleted with deleteArtifact",
                    "value_error", "body", "input", "artifactPortfolioID"));
        }
        String id = (String) input.get("artifactID");
        links.unlink(collection.registry(), collection.name(), reads.committed(id).id());
        Map<String, Object> payload = new HashMap<>();
        payload.put("artifactID", id);
        payload.put("success", true);
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }
}

package dev.fulcrum.artifacts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.artifacts.api.ArtifactReferencesApi;

public class ArtifactReferencesResource implements ArtifactReferencesApi {

    @Inject
    ArtifactVersions versions;

    @Override
    public Response resolveReference(String ref) {
        return Response.ok(ArtifactMapper.toVersion(versions.resolve(ref))).build();
    }
}

package dev.fulcrum.artifacts;

import jakarta.enterprise.context.ApplicationScoped;

/** The files of artifact versions (training checkpoints are artifact versions too). */
@ApplicationScoped
public class ArtifactBlobReferences implements BlobReferences {

    @Override
    public String uses() {
        return "exists (select 1 from artifact_files where digest = ?1)";
    }
}

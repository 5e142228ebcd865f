package dev.fulcrum.artifacts;

import jakarta.enterprise.context.ApplicationScoped;

/** The files uploaded for drafts and their manifests, committed or not (until the draft sweeper removes them). */
@ApplicationScoped
public class DraftBlobReferences implements BlobReferences {

    @Override
    public String uses() {
        return "exists (select 1 from artifact_draft_files where blob = ?1)"
                + " or exists (select 1 from artifact_drafts where manifest_digest = ?1)";
    }
}

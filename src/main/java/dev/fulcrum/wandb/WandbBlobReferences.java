package dev.fulcrum.wandb;

import jakarta.enterprise.context.ApplicationScoped;

import dev.fulcrum.artifacts.BlobReferences;

/** The files uploaded for W&B drafts and their manifests, committed or not (until the draft sweeper removes them). */
@ApplicationScoped
public class WandbBlobReferences implements BlobReferences {

    @Override
    public String uses() {
        return "exists (select 1 from wandb_artifact_draft_files where blob = ?1)"
                + " or exists (select 1 from wandb_artifact_drafts where manifest_digest = ?1)";
    }
}

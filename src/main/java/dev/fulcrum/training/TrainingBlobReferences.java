package dev.fulcrum.training;

import jakarta.enterprise.context.ApplicationScoped;

import dev.fulcrum.artifacts.BlobReferences;

/** Checkpoint files a worker uploaded for a job attempt, until the job finishes. */
@ApplicationScoped
public class TrainingBlobReferences implements BlobReferences {

    @Override
    public String uses() {
        return "exists (select 1 from training_job_files where digest = ?1)";
    }
}

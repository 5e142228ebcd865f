package dev.fulcrum.runs;

import jakarta.enterprise.context.ApplicationScoped;

import dev.fulcrum.artifacts.BlobReferences;

/** The files of runs ({@code run_files}: one blob per run and name; a replaced file's blob is no longer used). */
@ApplicationScoped
public class RunBlobReferences implements BlobReferences {

    @Override
    public String uses() {
        return "exists (select 1 from run_files where blob = ?1)";
    }
}

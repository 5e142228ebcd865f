-- When each blob was last written (or found already stored by a write): the blob collector removes a blob no table
-- references only once this is older than its grace period, holding this row's lock while it removes the blob, and a
-- write takes the same row before it looks whether the blob exists, so a write racing a sweep either sees the blob
-- removed (and stores it again) or makes the sweep see it fresh. Blobs written before this table get a row, with the
-- store's own time, when the collector first looks at them.
create table blob_puts (
    digest   char(64)    primary key,
    last_put timestamptz not null
);

-- the collector asks each table whether it uses a digest
create index artifact_files_digest on artifact_files (digest);
create index training_job_files_digest on training_job_files (digest);
create index wandb_artifact_draft_files_blob on wandb_artifact_draft_files (blob);
create index wandb_artifact_drafts_manifest on wandb_artifact_drafts (manifest_digest);

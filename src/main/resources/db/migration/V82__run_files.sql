-- The files of a run (issue 41): one row per run and name, the bytes in the blob store (blob: the SHA-256 the blob is
-- named by, as artifact_files.digest), replaced when the file is uploaded again. Blob users: artifact_files.digest,
-- wandb_artifact_drafts.manifest_digest, wandb_artifact_draft_files.blob and run_files.blob. A run's output.log has
-- no row: it is read from run_output.
create table run_files (
    run_id       bigint      not null references runs (id) on delete cascade,
    name         text        not null,
    blob         char(64)    not null,
    size         bigint      not null,
    md5          text        not null,
    content_type text        not null,
    updated_at   timestamptz not null default now(),
    primary key (run_id, name)
);
create index run_files_blob on run_files (blob);

-- A multipart upload of a draft's file (the W&B SDK uploads files of 2 GiB and more in parts): createArtifactFiles
-- starts it in the blob store (store_id: the store's id of it), the SDK PUTs its parts to signed URLs (each part's MD5
-- is kept, the ETag the SDK sends back) and completeMultipartUploadArtifact joins them into the file's blob. Uploads
-- never completed are aborted in the store and removed by the draft sweeper.
create table wandb_artifact_uploads (
    id         bigserial   primary key,
    draft_id   bigint      not null references wandb_artifact_drafts (id) on delete cascade,
    name       text        not null,
    store_id   text        not null,
    parts      int         not null,
    created_at timestamptz not null default now()
);
create index wandb_artifact_uploads_draft on wandb_artifact_uploads (draft_id);
create index wandb_artifact_uploads_created on wandb_artifact_uploads (created_at);

create table wandb_artifact_upload_parts (
    upload_id   bigint not null references wandb_artifact_uploads (id) on delete cascade,
    part_number int    not null,
    md5         text   not null,
    primary key (upload_id, part_number)
);

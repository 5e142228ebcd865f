-- An artifact version the W&B SDK is logging (the W&B protocol door, issue 25): createArtifact makes a draft, the SDK
-- uploads its files and manifest to the URLs the draft hands out, and commitArtifact turns the draft into a version of
-- the artifacts store (version_id). The draft is kept after the commit: its manifest is the one the SDK downloads.
create table wandb_artifact_drafts (
    id              bigserial   primary key,
    project_id      bigint      not null references projects (id) on delete cascade,
    collection      text        not null,
    type            text        not null,
    description     text,
    metadata        jsonb       not null default '{}',
    aliases         text[]      not null default '{}',
    tags            text[]      not null default '{}',
    manifest_digest char(64),
    version_id      bigint      references artifact_versions (id) on delete cascade,
    created_by      bigint      references users (id) on delete set null,
    created_at      timestamptz not null default now()
);
create index wandb_artifact_drafts_version on wandb_artifact_drafts (version_id);

-- A file of a draft: the MD5 the SDK announced (base64, as in its manifest) and, once uploaded, its blob.
create table wandb_artifact_draft_files (
    draft_id bigint not null references wandb_artifact_drafts (id) on delete cascade,
    name     text   not null,
    md5      text   not null,
    blob     char(64),
    size     bigint,
    primary key (draft_id, name)
);

-- Which run logged which artifact version and which runs used it (issue 41 §2), as the W&B SDK reports it: the run
-- named by createArtifact (kept on the draft until its commit) logged the version; useArtifact's run used it. Owned by
-- the W&B door (dev.fulcrum.wandb.WandbLineage). A deleted run or version takes its rows with it (cascade): lineage
-- is about what exists; the version (or run) that remains is not touched.
alter table wandb_artifact_drafts add column run_name text;

create table wandb_artifact_lineage (
    version_id bigint      not null references artifact_versions (id) on delete cascade,
    run_id     bigint      not null references runs (id) on delete cascade,
    kind       text        not null check (kind in ('logged', 'used')),
    at         timestamptz not null default now(),
    primary key (version_id, kind, run_id)
);
-- one run logged a version (W&B's createdBy): the first commit of its content
create unique index wandb_artifact_lineage_logged on wandb_artifact_lineage (version_id) where kind = 'logged';
create index wandb_artifact_lineage_run on wandb_artifact_lineage (run_id, kind, version_id);

-- A request to stop a run (the runs store's, dev.fulcrum.runs.RunStops): the W&B SDK sees it in its file stream's
-- answer and stops its process; the run then ends as killed.
alter table runs add column stop_requested_at timestamptz;

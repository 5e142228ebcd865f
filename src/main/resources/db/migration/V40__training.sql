-- Training: models (a run and a "lora" artifact collection each), their checkpoints (artifact versions),
-- training jobs claimed by executors with a lease, job events, logged trajectories and external workers.

create table training_models (
    id          varchar(40)  primary key,
    project_id  bigint       not null references projects (id) on delete cascade,
    name        varchar(128) not null,
    base_model  varchar(256) not null,
    run_id      bigint       references runs (id) on delete set null,
    run_name    varchar(128) not null,
    created_by  bigint       references users (id) on delete set null,
    created_at  timestamptz  not null default now(),
    unique (project_id, name)
);

-- One row per checkpoint; the files are the artifact version of that step.
create table training_checkpoints (
    model_id            varchar(40) not null references training_models (id) on delete cascade,
    step                integer     not null,
    artifact_version_id bigint      not null references artifact_versions (id) on delete cascade,
    metrics             jsonb       not null default '{}',
    created_at          timestamptz not null default now(),
    primary key (model_id, step)
);

create table training_jobs (
    id               varchar(40)  primary key,
    seq              bigserial    not null unique,
    model_id         varchar(40)  not null references training_models (id) on delete cascade,
    kind             varchar(8)   not null check (kind in ('rl', 'sft')),
    executor         varchar(8)   not null check (executor in ('cpu', 'gpu')),
    status           varchar(16)  not null default 'queued'
                     check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- JSON text, not jsonb: trajectories may hold text jsonb cannot (a NUL character)
    input            text         not null,
    config           jsonb        not null default '{}',
    created_by       bigint       not null references users (id) on delete cascade,
    created_at       timestamptz  not null default now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    error            text,
    base_step        integer,
    checkpoint_step  integer,
    attempts         integer      not null default 0,
    cancel_requested boolean      not null default false,
    lease_owner      varchar(80),
    lease_until      timestamptz
);
create index training_jobs_queue on training_jobs (executor, seq) where status = 'queued';
create index training_jobs_model on training_jobs (model_id, seq);
create index training_jobs_leases on training_jobs (lease_until) where status = 'running';

create table training_job_events (
    id         bigserial   primary key,
    job_id     varchar(40) not null references training_jobs (id) on delete cascade,
    type       varchar(32) not null,
    data       jsonb       not null default '{}',
    created_at timestamptz not null default now()
);
create index training_job_events_job on training_job_events (job_id, id);

-- Checkpoint files a worker uploaded for a job attempt, stored in the blob store until the job finishes.
create table training_job_files (
    job_id  varchar(40)  not null references training_jobs (id) on delete cascade,
    attempt integer      not null,
    path    varchar(512) not null,
    digest  char(64)     not null,
    size    bigint       not null,
    primary key (job_id, attempt, path)
);

-- Trajectory groups logged through /log, kept for inspection.
create table training_logs (
    id         bigserial   primary key,
    model_id   varchar(40) not null references training_models (id) on delete cascade,
    split      varchar(64) not null,
    step       bigint      not null,
    groups     text        not null, -- JSON text, as training_jobs.input
    created_by bigint      references users (id) on delete set null,
    created_at timestamptz not null default now()
);
create index training_logs_model on training_logs (model_id, id);

-- External GPU workers, and the built-in CPU executors of the replicas (kind 'cpu'), with when they last asked
-- for work: what system-check reports.
create table training_workers (
    id          varchar(80)  primary key,
    kind        varchar(8)   not null default 'gpu' check (kind in ('cpu', 'gpu')),
    name        varchar(128) not null,
    base_models text[]       not null,
    created_by  bigint       references users (id) on delete set null,
    created_at  timestamptz  not null default now(),
    last_seen   timestamptz  not null default now()
);

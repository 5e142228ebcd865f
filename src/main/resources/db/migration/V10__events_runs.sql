-- The platform event log (what automations react to) and runs with their metric history.

create table platform_events (
    id          bigserial   primary key,
    type        varchar(32) not null,
    occurred_at timestamptz not null default now(),
    project_id  bigint      references projects (id) on delete cascade,
    registry_id bigint      references registries (id) on delete cascade,
    author_id   bigint      references users (id) on delete set null,
    payload     jsonb       not null
);
create index platform_events_project on platform_events (project_id, id);
create index platform_events_registry on platform_events (registry_id, id) where registry_id is not null;

create table runs (
    id           bigserial    primary key,
    project_id   bigint       not null references projects (id) on delete cascade,
    name         varchar(128) not null,
    display_name varchar(256),
    config       jsonb        not null default '{}',
    state        varchar(16)  not null default 'running'
                 check (state in ('running', 'finished', 'failed', 'crashed', 'killed')),
    summary      jsonb        not null default '{}',
    last_step    bigint       not null default -1,
    row_count    bigint       not null default 0,
    created_by   bigint       references users (id) on delete set null,
    created_at   timestamptz  not null default now(),
    updated_at   timestamptz  not null default now(),
    unique (project_id, name)
);
create index runs_created_by on runs (project_id, created_by);

-- One row per logged history row; "seq" orders a run's rows as they were logged.
create table run_history (
    run_id bigint not null references runs (id) on delete cascade,
    seq    bigint not null,
    step   bigint not null,
    val    jsonb  not null,
    primary key (run_id, seq)
);

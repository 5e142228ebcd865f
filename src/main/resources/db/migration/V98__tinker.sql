-- The Tinker API (docs/tinker.md): sessions of the tinker SDK, their live LoRA models (each held by one fulcrum-worker
-- under a lease), and the operations of those models, whose results the SDK fetches as futures.
create table tinker_sessions (
    id           text        primary key,
    user_id      bigint      not null,
    entity       text        not null,
    project      text        not null,
    sdk_version  text,
    tags         jsonb       not null default '[]',
    created_at   timestamptz not null default now(),
    heartbeat_at timestamptz not null default now(),
    ended_at     timestamptz
);
create index tinker_sessions_user on tinker_sessions (user_id);

create table tinker_models (
    id                text        primary key,
    session_id        text        not null references tinker_sessions (id) on delete cascade,
    user_id           bigint      not null,
    training_model_id text        not null,
    base_model        text        not null,
    lora              jsonb       not null,
    state             text        not null,
    worker_id         text,
    attempt           int         not null default 0,
    lease_until       timestamptz,
    last_request_at   timestamptz not null default now(),
    ended_reason      text,
    created_at        timestamptz not null default now(),
    constraint tinker_models_state check (state in ('waiting', 'held', 'released', 'lost'))
);
create index tinker_models_waiting on tinker_models (base_model, created_at) where state = 'waiting';

create table tinker_requests (
    id              text        primary key,
    user_id         bigint      not null,
    model_id        text        references tinker_models (id) on delete cascade,
    kind            text        not null,
    seq_id          bigint      not null,
    sampler_id      text,
    idempotency_key text,
    request         jsonb       not null,
    state           text        not null,
    result          jsonb,
    error           text,
    category        text,
    created_at      timestamptz not null default now(),
    ended_at        timestamptz,
    constraint tinker_requests_state check (state in ('pending', 'running', 'done', 'failed', 'expired')),
    constraint tinker_requests_seq unique (model_id, seq_id),
    constraint tinker_requests_idempotency unique (user_id, idempotency_key)
);
create index tinker_requests_pending on tinker_requests (model_id, seq_id) where state in ('pending', 'running');

-- Named saved weights of a model: the step of its Fulcrum training model's checkpoint that holds them.
create table tinker_checkpoints (
    model_id   text        not null references tinker_models (id) on delete cascade,
    kind       text        not null,
    name       text        not null,
    step       int         not null,
    created_at timestamptz not null default now(),
    primary key (model_id, kind, name),
    constraint tinker_checkpoints_kind check (kind in ('sampler_weights'))
);

-- The files a worker uploaded for a running save (in the blob store), the checkpoint's files once it ends.
create table tinker_files (
    request_id text   not null references tinker_requests (id) on delete cascade,
    path       text   not null,
    digest     text   not null,
    size       bigint not null,
    primary key (request_id, path)
);

-- Sampling clients: a base model, or saved weights served as a checkpoint of a Fulcrum training model.
create table tinker_samplers (
    id         text        primary key,
    session_id text        not null references tinker_sessions (id) on delete cascade,
    user_id    bigint      not null,
    base_model text        not null,
    model_path text,
    checkpoint text,
    created_at timestamptz not null default now()
);

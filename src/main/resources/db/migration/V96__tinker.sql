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

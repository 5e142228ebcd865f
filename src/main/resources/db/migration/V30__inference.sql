-- The inference gateway: models added through the admin API (models from configuration are not stored) and the
-- usage of every completion.

create table inference_models (
    id                 varchar(256) primary key,
    backend            varchar(32)  not null check (backend in ('openai-compatible', 'builtin')),
    base_url           text,
    api_key_sealed     bytea,
    upstream_model     varchar(256),
    root               varchar(256),
    connect_timeout_ms integer      not null,
    timeout_ms         integer      not null,
    max_concurrency    integer      not null,
    max_queue          integer      not null,
    created_at         timestamptz  not null default now(),
    updated_at         timestamptz  not null default now()
);

create table inference_usage (
    id                bigserial primary key,
    created_at        timestamptz  not null,
    entity            varchar(64)  not null,
    project           varchar(128) not null,
    user_id           bigint       not null,
    model             varchar(512) not null,
    prompt_tokens     integer      not null,
    completion_tokens integer      not null,
    latency_ms        integer      not null,
    status            integer      not null
);
create index inference_usage_entity_time on inference_usage (entity, created_at);

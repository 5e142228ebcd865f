-- Team secrets (sealed with SecretCipher), team webhooks, and the webhook delivery outbox with its attempts.

create table team_secrets (
    id          bigserial    primary key,
    team_id     bigint       not null references entities (id) on delete cascade,
    name        varchar(128) not null,
    value       bytea        not null,
    created_at  timestamptz  not null default now(),
    updated_at  timestamptz  not null default now(),
    unique (team_id, name)
);

create table webhooks (
    id                  bigserial     primary key,
    team_id             bigint        not null references entities (id) on delete cascade,
    name                varchar(128)  not null,
    url                 varchar(2048) not null,
    access_token_secret varchar(128),
    signing_secret      varchar(128),
    enabled             boolean       not null default true,
    disabled_reason     text,
    created_by          bigint        references users (id) on delete set null,
    created_at          timestamptz   not null default now(),
    updated_at          timestamptz   not null default now(),
    unique (team_id, name)
);

-- The outbox. A row is due when state = 'pending' and next_attempt_at has passed; claiming it moves
-- next_attempt_at (and leased_until) to the end of the lease, so a claimer that dies leaves a row that
-- becomes due again by itself. "body" is the exact request body, sealed (it may hold secret values).
create table webhook_deliveries (
    id              bigserial   primary key,
    webhook_id      bigint      not null references webhooks (id) on delete cascade,
    automation_id   bigint,
    event_id        bigint,
    body            bytea       not null,
    state           varchar(16) not null default 'pending' check (state in ('pending', 'succeeded', 'failed')),
    attempts        int         not null default 0,
    -- attempts made before the current retry cycle (a manual redelivery starts a new cycle)
    cycle_start     int         not null default 0,
    next_attempt_at timestamptz not null default now(),
    leased_until    timestamptz,
    created_at      timestamptz not null default now(),
    completed_at    timestamptz
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending';
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, id);
create index webhook_deliveries_automation on webhook_deliveries (automation_id, id) where automation_id is not null;

create table webhook_attempts (
    delivery_id   bigint      not null references webhook_deliveries (id) on delete cascade,
    attempt       int         not null,
    attempted_at  timestamptz not null,
    status        int,
    latency_ms    int         not null,
    response_body text,
    error         text,
    primary key (delivery_id, attempt)
);

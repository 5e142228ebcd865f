-- Automations: which event in which project or registry sends which payload to which team webhook.
-- The webhook itself (and its deliveries) live in the webhooks migrations; the foreign key to it is added
-- there or in a later migration of this feature.

create table automations (
    id              bigserial    primary key,
    name            varchar(128) not null,
    description     text,
    project_id      bigint       references projects (id) on delete cascade,
    registry_id     bigint       references registries (id) on delete cascade,
    event_type      varchar(32)  not null,
    -- event-specific fields and run filters, as the API gives them (alias_regex, run_filter, metric_threshold,
    -- metric_change, run_states)
    condition       jsonb        not null default '{}',
    team_entity_id  bigint       not null references entities (id) on delete cascade,
    webhook_id      bigint       not null,
    action_type     varchar(16)  not null default 'WEBHOOKS',
    payload         text,
    granted_secrets text[]       not null default '{}',
    enabled         boolean      not null default true,
    created_by      bigint       references users (id) on delete set null,
    created_at      timestamptz  not null default now(),
    updated_at      timestamptz  not null default now(),
    check ((project_id is null) <> (registry_id is null))
);
create unique index automations_project_name on automations (project_id, name) where project_id is not null;
create unique index automations_registry_name on automations (registry_id, name) where registry_id is not null;
-- the trigger path: the enabled automations of one scope and event type
create index automations_project_event on automations (project_id, event_type) where enabled and project_id is not null;
create index automations_registry_event on automations (registry_id, event_type) where enabled and registry_id is not null;
create index automations_webhook on automations (webhook_id);

-- A run automation fires at most once per run per 24 hours: the last firing of each (automation, run).
create table automation_run_firings (
    automation_id bigint      not null references automations (id) on delete cascade,
    run_id        bigint      not null references runs (id) on delete cascade,
    fired_at      timestamptz not null,
    primary key (automation_id, run_id)
);

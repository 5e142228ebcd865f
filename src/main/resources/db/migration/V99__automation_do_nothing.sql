-- Automations whose action is DO_NOTHING (the W&B SDK's DoNothing) name no team and no webhook: they fire, each firing
-- is recorded in automation_firings, and nothing is sent. A webhook automation's firings are its deliveries.

alter table automations alter column team_entity_id drop not null;
alter table automations alter column webhook_id drop not null;
alter table automations add constraint automations_action check (
    (action_type = 'WEBHOOKS' and team_entity_id is not null and webhook_id is not null)
    or (action_type = 'DO_NOTHING' and team_entity_id is null and webhook_id is null));

create table automation_firings (
    id            bigserial   primary key,
    automation_id bigint      not null references automations (id) on delete cascade,
    event_id      bigint      not null,
    fired_at      timestamptz not null default now()
);
create index automation_firings_automation on automation_firings (automation_id, id);

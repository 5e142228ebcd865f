-- An automation acts with the rights of one user, "acts_as": whoever created it or, later, last changed its webhook,
-- payload or granted secrets or enabled it. Those rights are checked again every time it fires: using the webhook
-- needs the member role on the webhook's team, putting secret values into the payload ("uses_secrets": granted
-- secrets or any $NAME reference, braced or not) needs the admin role there (server administrators pass both). An
-- automation whose user lost them (or no longer exists) is disabled with the reason in "disabled_reason".
alter table automations add column acts_as bigint references users (id) on delete set null;
alter table automations add column uses_secrets boolean not null default false;
alter table automations add column disabled_reason text;
update automations set acts_as = created_by,
    uses_secrets = cardinality(granted_secrets) > 0 or coalesce(payload ~ '\$\{?[A-Z_]', false);

-- The secret values a delivery's body was rendered with, sealed like the body (JSON {"NAME": "value"}; null when
-- none): what is sent is masked as [secret NAME] in the response bodies the attempts keep.
alter table webhook_deliveries add column secrets bytea;

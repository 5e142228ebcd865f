-- A team's Slack integration is a row of webhooks of kind SLACK: its bot token is the team secret named by
-- access_token_secret (sent as Authorization: Bearer to Slack's chat.postMessage), its channel and the Slack
-- workspace's name are its own; url is unused (''). Its deliveries go through the same outbox, leases and retries.
-- The webhook endpoints show and change GENERIC rows only, the Slack integration endpoints SLACK rows only.
alter table webhooks add column kind varchar(16) not null default 'GENERIC' check (kind in ('GENERIC', 'SLACK'));
alter table webhooks add column slack_channel varchar(128);
alter table webhooks add column slack_workspace varchar(128);
alter table webhooks add constraint webhooks_slack check (
    (kind = 'GENERIC' and slack_channel is null)
    or (kind = 'SLACK' and slack_channel is not null and access_token_secret is not null));

-- A NOTIFICATION automation (the W&B SDK's SendNotification) sends a Slack message through its team's Slack
-- integration (webhook_id, a SLACK row); its payload holds the notification as JSON {"title", "message", "severity"}.
alter table automations drop constraint automations_action;
alter table automations add constraint automations_action check (
    (action_type in ('WEBHOOKS', 'NOTIFICATION') and team_entity_id is not null and webhook_id is not null)
    or (action_type = 'DO_NOTHING' and team_entity_id is null and webhook_id is null));

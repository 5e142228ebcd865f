-- Deliveries name the automation that caused them; deleting the automation keeps them (pending ones are still
-- sent) in the webhook's log.
alter table webhook_deliveries add constraint webhook_deliveries_automation
    foreign key (automation_id) references automations (id) on delete set null;

-- An automation goes with its webhook: a dangling webhook id would make every matching event fail.
alter table automations add constraint automations_webhook
    foreign key (webhook_id) references webhooks (id) on delete cascade;

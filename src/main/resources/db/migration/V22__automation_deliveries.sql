-- Deliveries name the automation that caused them; deleting the automation keeps them (pending ones are still
-- sent) in the webhook's log.
alter table webhook_deliveries add constraint webhook_deliveries_automation
    foreign key (automation_id) references automations (id) on delete set null;

-- An automation goes with its webhook: a dangling webhook id would make every matching event fail.
-- (Deliveries keep the id of the automation that caused them without a foreign key: deleting an automation
-- leaves its deliveries, pending ones included, in the webhook's log; ids are never reused.)
alter table automations add constraint automations_webhook
    foreign key (webhook_id) references webhooks (id) on delete cascade;

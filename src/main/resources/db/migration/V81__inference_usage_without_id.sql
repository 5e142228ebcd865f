-- inference_usage is an append-only log, read by entity and time (inference_usage_entity_time) and summed; nothing
-- names a row by its id. Its sequence and primary-key index were about a third of PostgreSQL's work per row, on the
-- gateway's one write per completion (bench/README.md, issue 24). Dropping a column rewrites nothing.
alter table inference_usage drop column id;

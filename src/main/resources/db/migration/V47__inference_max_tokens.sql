-- The largest max_tokens a request to a model of the catalog may ask for (null: no limit of Fulcrum's own).
alter table inference_models add column max_tokens integer check (max_tokens >= 1);

-- A model of the admin API that fulcrum-worker workers train (as fulcrum.inference.models."<id>".trainable does for one
-- of the configuration): its checkpoints are served on the same file.
alter table inference_models add column trainable boolean not null default false;

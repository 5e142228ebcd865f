-- Saved weights of the Tinker API may expire (docs/tinker.md): save_weights' and copy_weights' ttl_seconds, and
-- set_checkpoint_ttl_from_tinker_path, set when; the sweep deletes them (and their Fulcrum checkpoint) after it.
alter table tinker_checkpoints add column expires_at timestamptz;
create index tinker_checkpoints_expiry on tinker_checkpoints (expires_at) where expires_at is not null;

-- The Tinker API's training state (issue 59): save_weights keeps the adapter and AdamW's state as a checkpoint of the
-- model's Fulcrum training model, named like sampler weights; load_weights reads it back.
alter table tinker_checkpoints drop constraint tinker_checkpoints_kind;
alter table tinker_checkpoints add constraint tinker_checkpoints_kind check (kind in ('sampler_weights', 'weights'));
create index tinker_checkpoints_created on tinker_checkpoints (model_id, created_at);

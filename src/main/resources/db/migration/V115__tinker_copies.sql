-- The Tinker API's copy_weights (docs/tinker.md): a copy of saved weights is a training run of its own, in state 'copy'
-- (no worker ever holds it, no operation of a training client runs on it), naming the weights it was copied from.
alter table tinker_models drop constraint tinker_models_state;
alter table tinker_models add constraint tinker_models_state
    check (state in ('waiting', 'held', 'released', 'lost', 'copy'));
alter table tinker_models add column copied_from text;

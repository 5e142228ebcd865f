-- Models pulled by name from the Hugging Face Hub: one row per catalog model (of the admin API or the
-- configuration), its state surviving a restart; the files themselves are stored by sha256 under the model directory.
create table model_pulls (
    model_id        text        primary key,
    source          text        not null,
    name            text        not null,
    revision        text        not null,
    commit_sha      text,
    files           jsonb       not null default '[]',
    state           text        not null,
    completed_bytes bigint      not null default 0,
    total_bytes     bigint,
    error           text,
    gguf_path       text,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    constraint model_pulls_state check (state in ('queued', 'downloading', 'verifying', 'ready', 'failed')),
    constraint model_pulls_source check (source in ('admin', 'config'))
);

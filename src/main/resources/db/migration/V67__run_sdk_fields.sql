-- What the W&B SDK keeps with a run besides config, summary and history (the W&B protocol door, issue 25): tags, notes,
-- the console output (one row per line; a line written again replaces the earlier one) and the system-metrics lines.
alter table runs add column tags  text[] not null default '{}';
alter table runs add column notes text;

create table run_output (
    run_id  bigint not null references runs (id) on delete cascade,
    line    integer not null,
    content text   not null,
    primary key (run_id, line)
);

create table run_system_metrics (
    run_id bigint not null references runs (id) on delete cascade,
    line   integer not null,
    val    jsonb   not null,
    primary key (run_id, line)
);

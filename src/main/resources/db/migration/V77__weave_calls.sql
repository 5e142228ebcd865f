-- Weave's calls, feedback and files (the Python and TypeScript SDKs' traces), one row per call, per feedback item and
-- per file content of a project. JSON values are kept as the text that was sent (keys in their order).
create table weave_calls (
    project_id      bigint       not null references projects (id) on delete cascade,
    id              varchar(128) not null,
    trace_id        varchar(128),
    parent_id       varchar(128),
    op_name         text,
    display_name    text,
    thread_id       text,
    turn_id         text,
    started_at      timestamptz,
    ended_at        timestamptz,
    exception       text,
    attributes      text,
    inputs          text,
    output          text,
    summary         text,
    wb_user_id      text,
    wb_run_id       text,
    wb_run_step     bigint,
    wb_run_step_end bigint,
    deleted_at      timestamptz,
    primary key (project_id, id)
);
-- A page of a project's calls in the default order, and the time-window filter, walk this index and stop after the
-- page (limit + offset rows), whatever the project's size.
create index weave_calls_started on weave_calls (project_id, started_at, id) where deleted_at is null;
-- The calls of one op (the traces screen's op filter, evaluations' predict_and_score calls): an equality prefix, then
-- the page in order.
create index weave_calls_op on weave_calls (project_id, op_name, started_at, id) where deleted_at is null;
-- A trace's calls and a call's children (the call tree, deleting descendants).
create index weave_calls_trace on weave_calls (project_id, trace_id) where deleted_at is null;
create index weave_calls_parent on weave_calls (project_id, parent_id) where deleted_at is null;
-- The root calls only (trace_roots_only), the most common listing, in order.
create index weave_calls_roots on weave_calls (project_id, started_at, id) where deleted_at is null and parent_id is null;

create table weave_feedback (
    project_id     bigint       not null references projects (id) on delete cascade,
    id             varchar(128) not null,
    weave_ref      text         not null,
    feedback_type  text         not null,
    payload        text         not null,
    creator        text,
    annotation_ref text,
    runnable_ref   text,
    call_ref       text,
    trigger_ref    text,
    wb_user_id     text         not null,
    created_at     timestamptz  not null default now(),
    primary key (project_id, id)
);
-- The feedback of one call or object (what the SDK and the console read).
create index weave_feedback_ref on weave_feedback (project_id, weave_ref);
create index weave_feedback_created on weave_feedback (project_id, created_at, id);

create table weave_files (
    project_id bigint      not null references projects (id) on delete cascade,
    digest     varchar(64) not null,
    name       text        not null,
    content    bytea       not null,
    created_at timestamptz not null default now(),
    primary key (project_id, digest)
);

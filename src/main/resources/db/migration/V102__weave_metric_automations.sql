-- WEAVE_METRIC_THRESHOLD automations (issue 58 §2): a metric of the scores recorded on calls of a Weave op (a call's
-- output, or feedback on the calls), aggregated over the last N values or a time window, compared with a threshold.

-- The values of one op, newest first: the op's name as users give it (a published op's ref
-- weave:///entity/project/op/<name>:<digest> stripped to <name>; another op name as it is), then the end time. The
-- statements of traces/CallScores repeat this expression exactly, so that they walk this index.
create index weave_calls_op_ended on weave_calls (project_id,
    (split_part(regexp_replace(op_name, '^weave:///[^/]+/[^/]+/op/', ''), ':', 1)), ended_at)
    where deleted_at is null and ended_at is not null;
-- Feedback of one type, newest first (a scorer's results are feedback of type wandb.runnable.<scorer>).
create index weave_feedback_type on weave_feedback (project_id, feedback_type, created_at);

-- Whether an automation's condition held when it was last evaluated: it fires when it holds and did not before, so
-- once per crossing, not on every call.
create table automation_weave_metric_states (
    automation_id bigint      primary key references automations (id) on delete cascade,
    holding       boolean     not null,
    changed_at    timestamptz not null default now()
);
